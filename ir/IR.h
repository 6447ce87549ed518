// shardc's IR: the single representation every pass reads and writes.
//
//   Module    meshes, functions, and the loose top-level snippet (seed style)
//   Function  parameters, a body Block, result types with optional shardings
//   Block     arguments, ops in order, the returned values
//   Op        kind, operands, attributes, results, an optional body (manual)
//   Value     SSA value: name, tensor type, optional sharding, where defined
//
// Every object carries the Loc of the token that introduced it.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/OpAttributes.h"
#include "ir/Ops.h"
#include "ir/Sharding.h"
#include "ir/Types.h"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

class Op;
struct Block;

/// One element of a `dense<...>` literal, kept exactly as written.
struct Scalar {
  bool isFloat = false;
  bool isBool = false;
  int64_t i = 0; // integers and bools (0/1)
  double f = 0;  // floats

  double asDouble() const { return isFloat ? f : static_cast<double>(i); }
};

/// `dense<1.5>` (a splat: shape empty, one element) or
/// `dense<[[1, 2], [3, 4]]>` (shape from the nesting, elements row-major).
struct DenseLiteral {
  bool splat = true;
  std::vector<int64_t> shape;
  std::vector<Scalar> elements;
};

/// An attribute value. A tagged struct: `kind` says which field holds it.
struct Attribute {
  enum class Kind {
    Int,          // 1, -2
    Float,        // 1.5
    String,       // "sum"
    Bool,         // true
    List,         // [1, 0], [[0, 1], [1, 0]]
    AxisSet,      // {"x", "y":(1)2}
    Ident,        // a bare word, e.g. a dtype `f32`
    Sharding,     // sharding<@m, [...]> or <@m, [...]>
    ShardingList, // <[<@m, ...>, ...]> (sdy.sharding_per_value) or [S, S]
    Dense,        // dense<...> (the value of `constant`)
  };

  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s; // String, Ident
  std::vector<Attribute> list;
  std::vector<AxisRef> axes;
  std::vector<Sharding> shardings; // one for Sharding, n for ShardingList
  DenseLiteral dense;
  Loc loc;

  /// Integer list (`[1, 0]`) as int64s; nullopt when not a list of ints.
  std::optional<std::vector<int64_t>> intList() const;
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  double number() const { return kind == Kind::Float ? f : static_cast<double>(i); }
};

struct NamedAttribute {
  std::string name;
  Attribute value;
  Loc nameLoc;
};

/// An SSA value: a function or block parameter, or an op result.
class Value {
public:
  std::string name; // without '%'
  TensorType type;
  /// False only for a seed-style declaration with a sharding but no type
  /// (`%arg4 : sharding<...>`); such a value cannot be used by an op.
  bool typeKnown = true;
  std::optional<Sharding> sharding;
  Loc loc;

  Op *definingOp = nullptr; // null for parameters
  int resultIndex = 0;
  /// For results: the type written after `:`, if any (checked against the
  /// inferred type). For parameters it equals `type`.
  std::optional<TensorType> writtenType;
  Loc writtenTypeLoc;

  bool isParameter() const { return definingOp == nullptr; }
};

/// A list of ops with arguments and returned values. Function bodies,
/// manual_computation bodies and the regions of control flow are blocks.
struct Block {
  std::vector<std::unique_ptr<Value>> args;
  std::vector<std::unique_ptr<Op>> ops;
  std::vector<Value *> returned;
  /// Locations of the returned operands, for diagnostics.
  std::vector<Loc> returnedLocs;
  /// Types written after `return ... :`, if any.
  std::vector<TensorType> returnTypes;
  /// The builder reported an error in the written return types (a type it
  /// could not decode is missing from returnTypes): passes stay silent.
  bool returnTypesInvalid = false;
  Loc returnLoc;
  bool hasReturn = false;
  Loc loc;    // the `{`
  Loc endLoc; // the `}`
};

/// Decodes `a` into the type of an AttrKey; false when it is of another
/// kind. One overload per type that ir/OpAttributes.h uses.
bool decodeAttribute(const Attribute &a, int64_t &out);
bool decodeAttribute(const Attribute &a, double &out);
bool decodeAttribute(const Attribute &a, bool &out);
bool decodeAttribute(const Attribute &a, std::string &out);
bool decodeAttribute(const Attribute &a, std::vector<int64_t> &out);
bool decodeAttribute(const Attribute &a, std::vector<std::pair<int64_t, int64_t>> &out);
bool decodeAttribute(const Attribute &a, std::vector<AxisRef> &out);
bool decodeAttribute(const Attribute &a, Sharding &out);
bool decodeAttribute(const Attribute &a, std::vector<Sharding> &out);
bool decodeAttribute(const Attribute &a, DenseLiteral &out);

/// An op's regions (at most three), held inline: passes ask for them on
/// every op of every walk, and a vector cost an allocation each time (at
/// 100,000 ops, a hundred thousand per walk).
class RegionList {
public:
  Block *const *begin() const { return blocks_.data(); }
  Block *const *end() const { return blocks_.data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Block *operator[](size_t i) const { return blocks_[i]; }
  void push_back(Block *block) { blocks_[size_++] = block; }

private:
  std::array<Block *, 3> blocks_{};
  size_t size_ = 0;
};

class Op {
public:
  OpKind kind;
  Loc loc; // the op name
  std::vector<Value *> operands;
  std::vector<Loc> operandLocs;
  std::vector<NamedAttribute> attrs;
  std::vector<std::unique_ptr<Value>> results;
  /// Operand types written in MLIR's functional form `(T, T) -> T`.
  std::vector<TensorType> writtenOperandTypes;
  Loc writtenOperandTypesLoc;
  /// The builder reported an error in the types written after `:` (one it
  /// could not decode, or the wrong number of them): what is recorded is
  /// incomplete, and passes stay silent about it.
  bool typeSpecInvalid = false;
  /// The op's main region: a manual_computation's body, a `for` body (its
  /// arguments: the index, then the carried values), a `while`'s `do`
  /// region (the carried values), an `if`'s then-branch. Null otherwise.
  std::unique_ptr<Block> body;
  /// A `while`'s cond region (arguments: the carried values; it returns one
  /// tensor<i1>). Null for every other op.
  std::unique_ptr<Block> cond;
  /// An `if`'s else-branch (always present on an `if`, possibly empty when
  /// it has no results). Null for every other op.
  std::unique_ptr<Block> elseBody;

  const char *name() const { return opName(kind); }
  /// The attribute `key` names (ir/OpAttributes.h) as written, for checks
  /// that report its kind or location; null when absent.
  template <class T> const Attribute *attr(AttrKey<T> key) const { return attr(key.name); }
  template <class T> const NamedAttribute *namedAttr(AttrKey<T> key) const {
    return namedAttr(key.name);
  }
  /// The value of attribute `key`, decoded to its type; nullopt when it is
  /// absent or of another kind (infer-types reports those).
  template <class T> std::optional<T> get(AttrKey<T> key) const {
    const Attribute *a = attr(key.name);
    T value{};
    if (!a || !decodeAttribute(*a, value))
      return std::nullopt;
    return value;
  }
  /// The same, `fallback` when absent or of another kind.
  template <class T, class U> T get(AttrKey<T> key, U &&fallback) const {
    std::optional<T> value = get(key);
    return value ? std::move(*value) : T(std::forward<U>(fallback));
  }
  /// By spelling: for the parser, the printer and attribute checks that
  /// walk every attribute; everything else uses the typed keys.
  const Attribute *attr(std::string_view name) const;
  const NamedAttribute *namedAttr(std::string_view name) const;
  /// Sets (replacing) an attribute.
  void setAttr(std::string name, Attribute value);
  Value *result(size_t i = 0) const { return results.at(i).get(); }
  /// The regions, in execution order: cond before body for `while`, then
  /// before else for `if`.
  RegionList regions() const;
  /// The carried values' block arguments of a loop region (a `for` body
  /// skips its index); every argument for other regions.
  static std::vector<Value *> carriedArgs(const Op &op, const Block &region);
};

/// A function's declared result: type and optional sharding.
struct ResultSpec {
  TensorType type;
  std::optional<Sharding> sharding;
  Loc loc;
  /// The written type could not be decoded (the builder reported it).
  bool typeInvalid = false;
};

class Function {
public:
  std::string name; // without '@'; empty for the top-level snippet
  Block body;       // params are body.args
  std::vector<ResultSpec> results;
  Loc loc; // the symbol
  bool resultsWritten = false;

  bool isSnippet() const { return name.empty(); }
};

/// `sharding<...> : tensor<...>` written on its own (seed style): checked by
/// the verifier like any annotated type.
struct ShardedTypeDecl {
  Sharding sharding;
  TensorType type;
  Loc loc;
  Loc typeLoc;
};

class Module {
public:
  const SourceFile *file = nullptr;
  std::vector<std::unique_ptr<Mesh>> meshes;
  std::vector<std::unique_ptr<Function>> functions;
  /// Loose top-level declarations and statements, in an implicit function
  /// without a return.
  Function snippet;
  std::vector<ShardedTypeDecl> typeDecls;
  /// Ops a pass replaced and nothing refers to any more (the global ops
  /// partitioning rewrote into per-device ones). They die with the module,
  /// not in the pass: freeing 100,000 of them reads each op, value and
  /// attribute again from cold memory, and shardc leaves its last module
  /// to the operating system at exit, so it never pays that.
  std::vector<std::unique_ptr<Op>> retiredOps;

  const Mesh *findMesh(std::string_view name) const;
  Function *findFunction(std::string_view name) const;
  /// The program's device count: the size of its non-maximal, non-empty
  /// meshes (the verifier checks they agree); without them, one more than
  /// the highest device id of a one-device mesh (at least 1).
  int64_t deviceCount() const;
  std::vector<std::string> meshNames() const;
};

/// A manual_computation's in_shardings, out_shardings and manual axes, each
/// empty when its attribute is absent (the verifier reports that).
struct ManualComputationParts {
  const std::vector<Sharding> &inShardings;
  const std::vector<Sharding> &outShardings;
  const std::vector<AxisRef> &manualAxes;
};
ManualComputationParts manualComputationParts(const Op &op);

/// The mesh a collective's `axes` refer to: the enclosing
/// manual_computation's (`enclosingManualMesh`, null when outside one or
/// unknown), else its operand's or result's sharding's, else the program's
/// only mesh with axes. Null when none can be told.
const Mesh *collectiveMesh(const Op &op, const Module &module, const Mesh *enclosingManualMesh);

/// Calls `fn` on every op of `block`, recursing into the regions of
/// manual_computation and control flow after their op (pre-order).
void walkOps(const Block &block, const std::function<void(Op &)> &fn);
/// Whether `pred` holds for some op of `block` or of its regions, visited in
/// walkOps' order; stops at the first (a check that most often succeeds at
/// the first ops does not walk a long function).
bool anyOp(const Block &block, const std::function<bool(const Op &)> &pred);
/// Whether some argument or op result of `f` (regions included) has a
/// sharding; stops at the first. A function with none is a single-device
/// program, which export and partitioning leave alone.
bool hasAnySharding(const Function &f);
/// Every block of the module: function bodies, the snippet, the regions.
void walkBlocks(Module &module, const std::function<void(Block &)> &fn);

} // namespace shardc
