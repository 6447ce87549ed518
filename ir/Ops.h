// The op set of ../shared/LANGUAGE.md section 5: one table gives each op its
// spelling, group and operand count; everything that dispatches on ops (type
// inference, the printer, later the sharding rules) keys off OpKind.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace shardc {

// The X-macro lists are laid out by hand.
// clang-format off
#define SHARDC_UNARY_OPS(X)                                                    \
  X(Abs, "abs") X(Neg, "neg") X(Exp, "exp") X(Log, "log") X(Sqrt, "sqrt")       \
  X(Rsqrt, "rsqrt") X(Tanh, "tanh") X(Sigmoid, "sigmoid") X(Relu, "relu")       \
  X(Sin, "sin") X(Cos, "cos") X(Floor, "floor") X(Ceil, "ceil")                 \
  X(Round, "round") X(Sign, "sign") X(Not, "not") X(Reciprocal, "reciprocal")   \
  X(Erf, "erf") X(Identity, "identity")

#define SHARDC_BINARY_OPS(X)                                                   \
  X(Add, "add") X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(Max, "max")         \
  X(Min, "min") X(Pow, "pow") X(And, "and") X(Or, "or") X(Xor, "xor")           \
  X(Eq, "eq") X(Ne, "ne") X(Lt, "lt") X(Le, "le") X(Gt, "gt") X(Ge, "ge")
// clang-format on

enum class OpKind {
#define X(kind, name) kind,
  SHARDC_UNARY_OPS(X) SHARDC_BINARY_OPS(X)
#undef X
      Convert,
  Select,
  Matmul,
  Einsum,
  ReduceSum,
  ReduceMax,
  ReduceMin,
  ReduceMean,
  Reshape,
  Transpose,
  Broadcast,
  Concat,
  Slice,
  Pad,
  Constant,
  Iota,
  RandomUniform,
  RandomNormal,
  ShardingConstraint,
  Reshard,
  ManualComputation,
  AutoAxes,
  ExplicitAxes,
  AllGather,
  AllReduce,
  ReduceScatter,
  AllToAll,
  AllSlice,
  CollectivePermute,
  AxisIndex,
  For,
  While,
  If,
  Call,
};

enum class OpGroup {
  Unary,       // elementwise, one operand
  Convert,     // dtype change
  Binary,      // elementwise with numpy broadcasting (and select)
  Contraction, // matmul, einsum
  Reduction,   // reduce_*
  Shape,       // reshape, transpose, broadcast, concat, slice, pad
  Creation,    // nullary: constant, iota, random_*
  ShardingOp,  // sharding_constraint, reshard
  Manual,      // region ops: manual_computation, auto_axes, explicit_axes
  Collective,  // all_gather ... axis_index
  ControlFlow, // for, while, if (ops with regions that capture), call
};

struct OpInfo {
  OpKind kind;
  const char *name;
  OpGroup group;
  int minOperands;
  int maxOperands; // -1: any number
  const char *summary;
};

const OpInfo &opInfo(OpKind kind);
const char *opName(OpKind kind);
std::optional<OpKind> lookupOp(std::string_view name);
const std::vector<OpInfo> &allOps();
/// All op spellings (for "did you mean" on an unknown op).
std::vector<std::string_view> allOpNames();

inline bool isControlFlow(OpKind k) { return opInfo(k).group == OpGroup::ControlFlow; }

inline bool isElementwise(OpKind k) {
  auto g = opInfo(k).group;
  return g == OpGroup::Unary || g == OpGroup::Binary || g == OpGroup::Convert;
}

} // namespace shardc
