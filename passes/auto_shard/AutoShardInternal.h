// Internals of auto-sharding, private to passes/auto_shard/: the strategies
// of one op or value, the graph of nodes built from @main, and the pricing
// helpers shared by the graph, the plan and the report.
#pragma once

#include "passes/auto_shard/AutoShard.h"
#include "passes/auto_shard/CostModel.h"
#include "passes/auto_shard/StrategyProblem.h"
#include "passes/reshard/ReshardPlanner.h"
#include "passes/rules/ShardingRules.h"

#include "ir/IR.h"
#include "ir/ShardingKey.h"

#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace shardc::autoshard {

/// One way to compute an op (or lay out a parameter).
struct Strategy {
  /// The mesh axes of each factor of the op's rule (empty for parameters).
  std::vector<std::vector<AxisRef>> factorAxes;
  /// The layout each operand must have for the op to compute locally.
  std::vector<Sharding> operands;
  /// The layout the op computes its result in (partial over `partial`).
  Sharding computed;
  /// The value's layout after the node: its computed layout, reduced over
  /// `partial` (all_reduce, or reduce_scatter into a dim).
  Sharding result;
  /// Axes of the sharded reduction factors: the local result is partial.
  std::vector<AxisRef> partial;
  std::string partialKind = "sum";
  double compute = 0;       // seconds
  double communication = 0; // seconds: the reduction, or a reshard to a written layout
  double memory = 0;        // result bytes per device (padded)
  /// Bytes per device only while the op runs: the computed result before
  /// its reduction and the reduction's buffers (0 without one).
  double transient = 0;
  /// Returned by @main with a written sharding: the reshard to it (seconds).
  double toWrittenResult = 0;
};

/// Every strategy of `op` under `rule` on `mesh`: mesh axes assigned to its
/// shardable factors, each axis (or each of its two sub-axes, where a dim
/// needs them) to at most one factor, the factor's size divisible by its
/// axes' product; a dim of several factors keeps its major factors whole
/// before a minor one is sharded (what the partitioner can compute,
/// partition_assignment.cpp). Costs are left at 0.
std::vector<Strategy> opStrategies(const Op &op, const ShardingRule &rule, const Mesh &mesh);
/// Every layout of a value of `type` on `mesh` (axes whole or split in two
/// sub-axes where a dim needs it, divisible dims).
std::vector<Strategy> valueStrategies(const TensorType &type, const Mesh &mesh);
/// Whether `candidate` honours `written`: closed dims equal, open dims start
/// with the written axes, no axis named in `written.replicated`.
bool honours(const Sharding &candidate, const Sharding &written, const Mesh &mesh);
/// Same layout (mesh, axes of every dim); replicated lists and open/closed
/// ignored.
bool sameLayout(const Sharding &a, const Sharding &b, const Mesh &mesh);

// ---- what the user wrote (strategies.cpp) ----------------------------------------
/// Strategies of `all` honouring `written` (all of them when none is
/// written), or the written layout itself (closed, without operands) when
/// none honours it.
std::vector<Strategy> honouring(std::vector<Strategy> all, const std::optional<Sharding> &written,
                                const Mesh &mesh);
/// The operands' written closed shardings on `mesh` (null where none).
std::vector<const Sharding *> writtenOperands(const Op &op, const Mesh &mesh);
/// The strategy the partitioner runs for `op` with these operand layouts
/// (null: not written) and `result`: its own factor assignment
/// (partition::assignFactors), for what the user wrote and the enumeration
/// has no strategy for (uneven dims).
Strategy partitionerStrategy(const Op &op, const ShardingRule &rule,
                             const std::vector<const Sharding *> &operands, const Sharding &result,
                             const Mesh &mesh);
/// When every operand's sharding is written closed too, the op's strategy
/// is the user's: the strategies of `all` taking the operands as written
/// (no reshard into the op), else the partitioner's strategy for them; all
/// of `all` when some operand is not written closed on `mesh`.
std::vector<Strategy> keepWrittenOperands(const Op &op, const ShardingRule &rule,
                                          std::vector<Strategy> all, const Mesh &mesh);

/// Prices strategies and reshards with one cost model; caches the planner's
/// plans (a program repeats the same reshards).
class Pricer {
public:
  Pricer(const Module &module, const CostModel &model) : module_(module), model_(model) {}
  /// The plan moving `type` from `from` (partial over `partial`) to `to`.
  const ReshardPlan &plan(const TensorType &type, const Sharding &from,
                          const std::vector<AxisRef> &partial, const std::string &partialKind,
                          const Sharding &to);
  /// Alpha-beta time of a plan of `dtype` elements: per step, the latency
  /// and bandwidth of its axes; all_slice is a local copy of the block kept
  /// (memory bandwidth), relabel is free.
  double time(const ReshardPlan &plan, DType dtype) const;
  /// Sets compute, communication (the reduction into `result`) and memory
  /// of `s` for `op` (null for a parameter) producing a value of `type`.
  void price(const Op *op, const TensorType &type, Strategy &s);
  /// Bytes per device a plan of `type` holds at once while it runs, beyond
  /// its source: the buffers between its steps, each collective's scratch
  /// (freed after it under a budget, runtime/Collectives.cpp) and, when
  /// `withResult`, its result.
  double workingBytes(const ReshardPlan &plan, const TensorType &type, const Sharding &from,
                      bool withResult) const;
  const Mesh &meshOf(const Sharding &s) const;
  /// Notes which values of `body` the executable never stores: an
  /// elementwise, shape or creation op's result whose one use is an
  /// elemental op of the same block is computed inside its consumer's loop
  /// (backend/llvm/Fusion.cpp), so neither writing nor reading it moves
  /// bytes. Values of nested blocks are not noted (priced as stored).
  void noteFusion(const Block &body);

private:
  const Module &module_;
  const CostModel &model_;
  std::unordered_map<KeyWords, ReshardPlan, KeyWordsHash> plans_; // by request
  std::unordered_set<const Value *> fused_;
};

/// The distinct layouts a node's strategies give (or want) at one end of an
/// edge, and which of them each strategy's is.
struct Layouts {
  std::vector<const Sharding *> distinct;
  std::vector<int> of; // strategy -> index into distinct

  template <typename Pick> Layouts(const std::vector<Strategy> &strategies, Pick pick) {
    std::unordered_map<KeyWords, int, KeyWordsHash> index;
    for (const Strategy &s : strategies) {
      KeyWords key;
      appendKey(key, pick(s), false);
      auto [it, fresh] = index.emplace(std::move(key), static_cast<int>(distinct.size()));
      if (fresh)
        distinct.push_back(&pick(s));
      of.push_back(it->second);
    }
  }
};

/// `price(from, to)` for every strategy of `sources` (its layout
/// `pickSource`) and every strategy of `targets` (`pickTarget`), row-major
/// by source: each computed once per pair of distinct layouts, as many
/// strategies give their result, or want their operand, in the same layout.
template <typename PickSource, typename PickTarget, typename Price>
auto pricePairs(const std::vector<Strategy> &sources, PickSource pickSource,
                const std::vector<Strategy> &targets, PickTarget pickTarget, Price price) {
  const Layouts from(sources, pickSource), to(targets, pickTarget);
  std::vector<decltype(price(*from.distinct[0], *to.distinct[0]))> distinct, all;
  for (const Sharding *f : from.distinct)
    for (const Sharding *t : to.distinct)
      distinct.push_back(price(*f, *t));
  all.reserve(sources.size() * targets.size());
  for (int a : from.of)
    for (int b : to.of)
      all.push_back(distinct[static_cast<size_t>(a) * to.distinct.size() + b]);
  return all;
}

/// A strategy's result layout, for pricePairs.
inline const Sharding &resultLayout(const Strategy &s) { return s.result; }

/// Bytes of `shape` in `dtype`.
double shapeBytes(DType dtype, const std::vector<int64_t> &shape);
/// Bytes per device of a value of `type` laid out as `s` (padded blocks).
double localBytes(const TensorType &type, const Sharding &s, const Mesh &mesh);

/// The executable places every value between ops (not parameters and
/// results, which have their own buffers) in one arena at offsets aligned to
/// this (kArenaAlignment in backend/llvm/BufferPlan.h).
constexpr double kArenaAlignment = 64;

/// `bytes` as the arena holds them: a whole number of aligned slots.
inline double arenaBytes(double bytes) {
  return bytes <= 0 ? 0 : std::ceil(bytes / kArenaAlignment) * kArenaAlignment;
}

/// A node of the strategy graph: a parameter or an op of @main.
struct GraphNode {
  Value *value = nullptr; // the parameter or the op's result
  Op *op = nullptr;       // null for a parameter, a loop result or region argument
  std::vector<Strategy> strategies;
  int follows = -1;
  int step = 0;
  /// How many times it runs: 1, or inside loops the product of their trip
  /// counts (a `while` counts kWhileTrips).
  double weight = 1;
};

/// The trip count a `while` is priced with: its real one is unknown.
constexpr double kWhileTrips = 8;

/// An operand use: node `to`'s operand `operand` is node `from`'s value.
struct GraphEdge {
  int from = 0;
  int to = 0;
  size_t operand = 0;
};

/// @main as nodes and edges, and the problem the solver sees.
struct StrategyGraph {
  Function *main = nullptr;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::map<const Value *, int> nodeOf;
  /// An op left to propagation, and why (for the report).
  struct Opaque {
    const Op *op;
    const char *why;
  };
  /// Ops left to propagation: no factor rule (manual_computation), several
  /// results, meshes the solver does not decide, explicit types.
  std::vector<Opaque> opaque;
  StrategyProblem problem;
};

/// The step of each value's last use in `body` (op k at step k + 1, a
/// region's uses at its op's step), parameters and returned values at the
/// last step (the runtime holds them to the end).
std::map<const Value *, int> lastUses(const Block &body, int numSteps);

/// Adds to `graph.problem` the memory of the ops left to propagation
/// (`opaque`, each with its step), at their most: one-strategy nodes after
/// the graph's own.
void addOpaqueMemory(StrategyGraph &graph, const std::vector<std::pair<const Op *, int>> &opaque,
                     const std::map<const Value *, int> &lastUse);

/// A loop's back edge: what its body returns (node `from`) resharded to the
/// carried layout (node `to`) at the end of every iteration, `weight` times.
struct BackEdge {
  int from, to;
  double weight;
};

/// Fills `graph.problem` (graph_problem.cpp): nodes' costs and memory with
/// live ranges, the ops left to propagation (`opaqueAt`, with their steps),
/// every edge and back edge priced. `writtenResults`: the output buffer's
/// bytes of each result of @main with a written sharding.
void makeProblem(StrategyGraph &graph, Pricer &pricer, const AutoShardOptions &options,
                 const std::map<const Value *, double> &writtenResults,
                 const std::vector<std::pair<const Op *, int>> &opaqueAt,
                 const std::vector<BackEdge> &backEdges);

/// Builds the graph of @main (strategies priced, written shardings honoured,
/// followers, liveness) and its StrategyProblem.
StrategyGraph buildStrategyGraph(Module &module, Function &main, Pricer &pricer,
                                 const AutoShardOptions &options);

/// Writes the chosen layouts on every node's value (closed) and inserts a
/// sharding_constraint where a consumer needs an operand laid out otherwise
/// than its producer left it; fills the report's per-op and per-edge rows
/// (options.report), naming ops as options.describeOp does.
void applyPlan(Module &module, StrategyGraph &graph, const std::vector<int> &choice, Pricer &pricer,
               const AutoShardOptions &options);

} // namespace shardc::autoshard
