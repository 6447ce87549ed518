// Internals of the infer-types pass (passes/infer_types*.cpp), shared by its
// per-op-group files. Not part of the passes' public interface (Passes.h).
//
// Each rule reads an op whose operand types are all known and returns the
// result type, or nullopt after reporting why it has none. Rules never see
// an op with an unknown operand: the driver skips those silently, so one bad
// value gives one error, not a cascade.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::infer_types {

/// State shared by the rules while one module is walked.
struct InferContext {
  InferContext(Module &module, DiagnosticEngine &diags) : module(module), diags(diags) {}

  Module &module;
  DiagnosticEngine &diags;
  /// Inside a manual_computation: its mesh, which its collectives name their
  /// axes in (null when the mesh is unknown: the verifier reports that).
  bool insideManual = false;
  const Mesh *manualMesh = nullptr;
  /// Declarations without a type (`%v : sharding<...>`) already reported as
  /// an operand, so that each is reported once.
  std::set<const Value *> reportedUntyped;
  bool failed = false;

  DiagnosticEngine::Builder error(Loc loc, std::string message) {
    failed = true;
    return diags.error(loc, std::move(message));
  }
};

// ---- driver (infer_types.cpp) ------------------------------------------------

/// Infers the result types of every op of `block`, in order, recursing into
/// manual_computation bodies, then checks types written on its `return`.
void inferBlock(Block &block, InferContext &ctx);
/// Checks a written result type against the inferred one and records the
/// inferred type on the result; a type of more than 2^62 elements is an
/// error instead.
void setResultType(Value &result, const TensorType &inferred, InferContext &ctx);

// ---- locations and attributes (infer_types_attributes.cpp) --------------------

/// Where operand `i` is written; the op name when unknown.
Loc operandLoc(const Op &op, size_t i);
/// Where an attribute's value is written; else its name; else the op name.
Loc attrLoc(const Op &op, std::string_view name);
template <class T> Loc attrLoc(const Op &op, AttrKey<T> key) { return attrLoc(op, key.name); }
/// Where element `index` of a list attribute is written; else attrLoc.
Loc attrElementLoc(const Op &op, std::string_view name, size_t index);
template <class T> Loc attrElementLoc(const Op &op, AttrKey<T> key, size_t index) {
  return attrElementLoc(op, key.name, index);
}
/// Where the (single) result's type is written; the op name when it isn't.
Loc writtenTypeLoc(const Op &op);
/// Adds `note: %v is defined here: tensor<...>` at the value's definition.
void noteDefinition(DiagnosticEngine::Builder &diag, const Value &value);
/// `[1, 0]`.
std::string formatList(const std::vector<int64_t> &values);
/// "an integer", "a list", ... for `x must be ...: got <kind>`.
const char *attrKindDescription(Attribute::Kind kind);

/// Required attributes: report `<op> - missing attribute: <name>` or a wrong
/// kind and return nullopt.
std::optional<int64_t> requireInt(const Op &op, InferContext &ctx, AttrKey<int64_t> key);
std::optional<std::vector<int64_t>> requireIntList(const Op &op, InferContext &ctx,
                                                   AttrKey<std::vector<int64_t>> key);
const Attribute *requireAttr(const Op &op, InferContext &ctx, std::string_view name,
                             Attribute::Kind kind);
template <class T>
const Attribute *requireAttr(const Op &op, InferContext &ctx, AttrKey<T> key,
                             Attribute::Kind kind) {
  return requireAttr(op, ctx, std::string_view(key.name), kind);
}

/// The written result type for the ops that cannot infer one (reshape,
/// constant, ...); reports `result type required` when there is none.
const TensorType *requireWrittenType(const Op &op, InferContext &ctx);

// ---- type helpers (infer_types.cpp) ---------------------------------------------

/// Reports `<op> - element type must be <what>: <dtype>` unless `ok`.
bool checkElementType(const Op &op, InferContext &ctx, Loc loc, DType dtype, bool ok,
                      const char *what);
inline bool isNumeric(DType t) { return isFloat(t) || isInteger(t); }

/// Whether a literal element can be stored in `dtype` without changing its
/// value (1.5 does not fit i32; 2 does not fit i1; true fits only i1).
bool scalarFits(const Scalar &value, DType dtype);
std::string formatScalar(const Scalar &value);

/// Saturating dim arithmetic: INT64_MAX on overflow, which setResultType then
/// rejects as too large (types are capped at 2^62 elements, as in Types.cpp).
int64_t saturatingAdd(int64_t a, int64_t b);
int64_t saturatingMul(int64_t a, int64_t b);

/// numpy broadcasting of two shapes (aligned from the right, equal or 1).
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b);

// ---- rules, one per op group ---------------------------------------------------

/// Unary, convert, binary and select (infer_types_elementwise.cpp).
std::optional<TensorType> inferElementwise(Op &op, InferContext &ctx);
/// matmul, einsum (infer_types_contraction.cpp).
std::optional<TensorType> inferContraction(Op &op, InferContext &ctx);
/// reduce_* (infer_types_contraction.cpp).
std::optional<TensorType> inferReduction(Op &op, InferContext &ctx);
/// reshape, transpose, broadcast, concat, slice, pad (infer_types_shape.cpp).
std::optional<TensorType> inferShapeOp(Op &op, InferContext &ctx);
/// constant, iota, random_* (infer_types_creation.cpp).
std::optional<TensorType> inferCreation(Op &op, InferContext &ctx);
/// sharding_constraint, reshard and the collectives (infer_types_manual.cpp).
std::optional<TensorType> inferShardingOrCollective(Op &op, InferContext &ctx);
/// manual_computation: checks operands against the body's local parameters,
/// infers the body, and sets every result (infer_types_manual.cpp). Unlike the
/// other rules it runs even when an operand type is unknown, so that errors
/// inside the body are still found.
void inferManualComputation(Op &op, InferContext &ctx);
/// auto_axes, explicit_axes: the body sees global shapes, so each body
/// argument has its operand's type and each result its returned value's
/// (infer_types_axes.cpp).
void inferAxesRegion(Op &op, InferContext &ctx);

// ---- control flow (infer_types_control.cpp) ------------------------------------

/// for, while, if and call: region argument types, region returns against the
/// carried or written types, predicates, call arity and argument types.
void inferControlFlow(Op &op, InferContext &ctx);
/// The module's functions, each after the functions it calls; a call that
/// closes a cycle is reported (recursion), its edge left out.
std::vector<Function *> calleesFirst(Module &module, InferContext &ctx);

} // namespace shardc::infer_types
