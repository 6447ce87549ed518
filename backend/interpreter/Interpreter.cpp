// The interpreter's driver: runs a block op by op for all its instances in
// lockstep, and manual_computation (SPMD_CONTRACT.md section 2):
//   1. the body's instances: one per combination of coordinates of the
//      manual axes (those of enclosing manual_computations included), in
//      row-major mesh axis order;
//   2. operand i -> each instance's block: for each dim, the manual axes of
//      in_shardings[i] in that dim split it into ceil(D/n) blocks, the block
//      index is the mixed-radix index of the instance's coordinates, and
//      elements past D are zeros;
//   3. the body runs for all instances in lockstep (runBlock);
//   4. result i <- the blocks assembled by out_shardings[i], padding dropped;
//      along a manual axis that does not shard the result the instance at
//      coordinate 0 is taken.
// Example: mesh <["x"=2]>, tensor<3xf32> [1, 2, 3] split on {"x"}: instance
// x=0 sees [1, 2], instance x=1 sees [3, 0].
#include "backend/interpreter/InterpreterInternal.h"
#include "ir/ShardingLayout.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace shardc::interp {
namespace detail {

bool Instances::isManual(const std::string &axis) const {
  if (!mesh)
    return false;
  int index = mesh->axisIndex(axis);
  return std::find(manualAxes.begin(), manualAxes.end(), index) != manualAxes.end();
}

void fail(const Op &op, const std::string &message) {
  throw Error(fmt::format("{} - {}", op.name(), message), op.loc);
}

namespace {

/// The mesh of a manual_computation without manual axes and without a known
/// mesh: nothing to split along.
const Mesh kNoMesh;

/// A value of the block being run: one tensor per instance.
using PerInstance = std::vector<Tensor>;

/// The instance linear index of `coords` among `instances`: row-major over
/// the manual axes.
size_t linearIndex(const Instances &instances, const std::vector<int64_t> &coords) {
  size_t index = 0;
  for (int axis : instances.manualAxes)
    index = index * static_cast<size_t>(instances.mesh->axes[axis].size) +
            static_cast<size_t>(coords[axis]);
  return index;
}

/// The manual axes of `sharding` (those in `axes`) as one DimSharding per dim.
std::vector<DimSharding> manualDims(const Sharding &sharding, const std::vector<AxisRef> &axes,
                                    size_t rank) {
  std::vector<DimSharding> dims(rank);
  for (size_t d = 0; d < rank && d < sharding.dims.size(); ++d)
    for (const AxisRef &axis : sharding.dims[d].axes)
      for (const AxisRef &manual : axes)
        if (axis.name == manual.name)
          dims[d].axes.push_back(axis);
  return dims;
}

class Runner {
public:
  explicit Runner(const Module &module) : module_(module) {}

  /// Runs `block` for every instance; args[i] is block argument i.
  /// The values a block sees: its own, then its parent's (a control-flow
  /// region captures what is defined above it; a manual_computation body has
  /// no parent). With `select` set, the parent's values are seen through one
  /// instance (a region run on each instance alone).
  struct Scope {
    std::unordered_map<const Value *, PerInstance> values;
    const Scope *parent = nullptr;
    int64_t select = -1;
    std::unordered_map<const Value *, PerInstance> selected; // cache of the above

    const PerInstance *find(const Value *v) {
      auto it = values.find(v);
      if (it != values.end())
        return &it->second;
      if (!parent)
        return nullptr;
      const PerInstance *outer = const_cast<Scope *>(parent)->find(v);
      if (!outer || select < 0)
        return outer;
      auto [cached, added] = selected.try_emplace(v);
      if (added)
        cached->second = {outer->at(static_cast<size_t>(select))};
      return &cached->second;
    }
  };

  /// Runs `block` on `args` and gives what it returns.
  std::vector<PerInstance> runBlock(const Block &block, const Instances &instances,
                                    std::vector<PerInstance> args, Scope *parent = nullptr,
                                    int64_t select = -1) {
    Scope scope;
    scope.parent = parent;
    scope.select = select;
    for (size_t i = 0; i < block.args.size(); ++i)
      scope.values[block.args[i].get()] = std::move(args.at(i));
    auto lookup = [&](const Value *v, const Op *op) -> const PerInstance & {
      const PerInstance *found = scope.find(v);
      if (!found)
        throw Error(fmt::format("internal error: %{} has no value", v ? v->name : "?"),
                    op ? op->loc : Loc{});
      return *found;
    };
    for (const auto &op : block.ops) {
      std::vector<const PerInstance *> operands;
      for (const Value *v : op->operands)
        operands.push_back(&lookup(v, op.get()));
      std::vector<PerInstance> results;
      try {
        results = isControlFlow(op->kind) ? runControlFlow(*op, instances, operands, scope)
                                          : runOp(*op, instances, operands);
      } catch (const Error &e) {
        if (e.loc.known())
          throw;
        throw Error(fmt::format("{} - {}", op->name(), e.what()), op->loc);
      }
      for (size_t r = 0; r < op->results.size(); ++r) {
        checkTypes(*op, *op->results[r], results.at(r));
        scope.values[op->results[r].get()] = std::move(results[r]);
      }
    }
    std::vector<PerInstance> returned;
    for (const Value *v : block.returned)
      returned.push_back(lookup(v, nullptr));
    return returned;
  }

private:
  /// A computed shape that is not the IR's is a bug (in the interpreter or
  /// in whatever produced the program, e.g. the partitioner): say so.
  static void checkTypes(const Op &op, const Value &result, const PerInstance &value) {
    for (const Tensor &t : value)
      if (t.type() != result.type)
        fail(op, fmt::format("computed {} but the program says %{} is {}", t.type().str(),
                             result.name, result.type.str()));
  }

  std::vector<PerInstance> runOp(const Op &op, const Instances &instances,
                                 const std::vector<const PerInstance *> &operands) {
    if (op.kind == OpKind::ManualComputation)
      return runManual(op, instances, operands);
    // auto_axes / explicit_axes change axis types only: the body runs on
    // the operands' values, which the reshards at its edges keep.
    if (op.kind == OpKind::AutoAxes || op.kind == OpKind::ExplicitAxes) {
      std::vector<PerInstance> args;
      for (const PerInstance *v : operands)
        args.push_back(*v);
      return runBlock(*op.body, instances, std::move(args));
    }
    if (opInfo(op.kind).group == OpGroup::Collective) {
      std::vector<const Tensor *> perInstance;
      for (size_t i = 0; i < instances.count() && !operands.empty(); ++i)
        perInstance.push_back(&(*operands[0])[i]);
      return {detail::evalCollective(op, instances, perInstance)};
    }
    PerInstance out;
    for (size_t i = 0; i < instances.count(); ++i) {
      std::vector<const Tensor *> args;
      for (const PerInstance *v : operands)
        args.push_back(&(*v)[i]);
      out.push_back(evalLocal(op, args));
    }
    return {std::move(out)};
  }

  static Tensor evalLocal(const Op &op, const std::vector<const Tensor *> &args) {
    switch (opInfo(op.kind).group) {
    case OpGroup::Unary:
    case OpGroup::Convert:
    case OpGroup::Binary:
      return evalElementwise(op, args);
    case OpGroup::Contraction:
      return evalContraction(op, args);
    case OpGroup::Reduction:
      return evalReduction(op, *args[0]);
    case OpGroup::Shape:
      return evalShapeOp(op, args);
    case OpGroup::Creation:
      return evalCreation(op);
    case OpGroup::ShardingOp:
      return *args[0]; // sharding_constraint, reshard: identity on values
    default:
      fail(op, "cannot run here");
    }
  }

  std::vector<PerInstance> runManual(const Op &op, const Instances &outer,
                                     const std::vector<const PerInstance *> &operands) {
    ManualComputationParts parts = manualComputationParts(op);
    const Sharding *any = !parts.inShardings.empty()    ? &parts.inShardings[0]
                          : !parts.outShardings.empty() ? &parts.outShardings[0]
                                                        : nullptr;
    const Mesh *mesh = any ? module_.findMesh(any->meshName) : nullptr;
    if (!op.body || parts.inShardings.size() != op.operands.size() ||
        parts.outShardings.size() != op.results.size() || (!mesh && !parts.manualAxes.empty()))
      fail(op, "malformed manual_computation");
    if (!mesh || parts.manualAxes.empty())
      mesh = outer.mesh; // nothing new is manual: the same instances

    // 1. The body's instances, and each one's parent among `outer`'s.
    Instances inner;
    inner.mesh = mesh;
    if (outer.mesh && outer.mesh != mesh && !parts.manualAxes.empty())
      fail(op, fmt::format("nested manual_computation on another mesh: @{} inside @{}",
                           mesh ? mesh->name : "?", outer.mesh->name));
    inner.manualAxes = outer.manualAxes;
    for (const AxisRef &axis : parts.manualAxes) {
      int index = mesh->axisIndex(axis.name);
      if (index < 0)
        fail(op, fmt::format("unknown manual axis \"{}\"", axis.name));
      inner.manualAxes.push_back(index);
    }
    std::sort(inner.manualAxes.begin(), inner.manualAxes.end());
    int64_t count = 1;
    for (int axis : inner.manualAxes)
      count *= mesh->axes[axis].size;
    std::vector<size_t> parent;
    for (int64_t i = 0; i < count; ++i) {
      std::vector<int64_t> coords(mesh ? mesh->axes.size() : 0, 0);
      int64_t rest = i;
      for (size_t k = inner.manualAxes.size(); k-- > 0;) {
        int64_t size = mesh->axes[inner.manualAxes[k]].size;
        coords[inner.manualAxes[k]] = rest % size;
        rest /= size;
      }
      parent.push_back(outer.mesh ? linearIndex(outer, coords) : 0);
      inner.coords.push_back(std::move(coords));
    }

    // 2. Each operand's block for each instance.
    std::vector<PerInstance> args;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const PerInstance &value = *operands[i];
      std::vector<DimSharding> dims =
          manualDims(parts.inShardings[i], parts.manualAxes, value[0].rank());
      PerInstance blocks;
      for (size_t j = 0; j < inner.count(); ++j) {
        Tensor block = value[parent[j]];
        for (size_t d = 0; d < dims.size(); ++d) {
          int64_t shards = shardCount(dims[d], mesh ? *mesh : kNoMesh);
          int64_t size = localDimSize(block.shape()[d], shards);
          int64_t index = shardIndex(mesh ? *mesh : kNoMesh, dims[d], inner.coords[j]);
          block = sliceDim(block, d, index * size, size);
        }
        if (block.type() != op.body->args[i]->type)
          fail(op, fmt::format("operand {} block is {} but the body argument is {}", i,
                               block.type().str(), op.body->args[i]->type.str()));
        blocks.push_back(std::move(block));
      }
      args.push_back(std::move(blocks));
    }

    // 3. The body, all instances in lockstep.
    std::vector<PerInstance> returned = runBlock(*op.body, inner, std::move(args));

    // 4. Each result assembled per outer instance.
    std::vector<PerInstance> results;
    for (size_t r = 0; r < op.results.size(); ++r)
      results.push_back(assemble(op, r, outer, inner, parent, returned.at(r)));
    return results;
  }

  PerInstance assemble(const Op &op, size_t r, const Instances &outer, const Instances &inner,
                       const std::vector<size_t> &parent, const PerInstance &blocks) {
    ManualComputationParts parts = manualComputationParts(op);
    const Mesh &mesh = inner.mesh ? *inner.mesh : kNoMesh;
    const TensorType &type = op.results[r]->type;
    std::vector<DimSharding> dims =
        manualDims(parts.outShardings[r], parts.manualAxes, type.rank());
    // Along what of the manual axes does not shard the result, instances
    // hold the same block: only the one at coordinate 0 is taken.
    std::vector<AxisRef> used;
    for (const DimSharding &dim : dims)
      used.insert(used.end(), dim.axes.begin(), dim.axes.end());
    std::vector<int> manual;
    for (const AxisRef &axis : parts.manualAxes)
      manual.push_back(mesh.axisIndex(axis.name));
    PerInstance out(outer.count(), Tensor(type));
    for (size_t j = 0; j < inner.count(); ++j) {
      const std::vector<int64_t> &coords = inner.coords[j];
      if (std::any_of(manual.begin(), manual.end(),
                      [&](int a) { return uncoveredCoordinate(mesh, a, used, coords) != 0; }))
        continue;
      const Tensor &block = blocks[j];
      if (block.rank() != type.rank())
        fail(op, fmt::format("returned value {} has the wrong rank", r));
      std::vector<int64_t> start(type.rank());
      for (size_t d = 0; d < type.rank(); ++d) {
        start[d] = shardIndex(mesh, dims[d], coords) * block.shape()[d];
        if (block.shape()[d] * shardCount(dims[d], mesh) < type.shape[d])
          fail(op, fmt::format("result {} blocks don't cover {}", r, type.str()));
      }
      Tensor &target = out[parent[j]];
      std::vector<int64_t> strides = stridesOf(type.shape);
      forEachIndex(block.shape(), [&](const std::vector<int64_t> &index, int64_t linear) {
        int64_t at = 0;
        for (size_t d = 0; d < index.size(); ++d) {
          int64_t g = start[d] + index[d];
          if (g >= type.shape[d])
            return; // padding
          at += g * strides[d];
        }
        target.copyElement(at, block, linear);
      });
    }
    return out;
  }

  // ---- control flow -------------------------------------------------------------

  /// A predicate's value on every instance; nullopt when they differ.
  static std::optional<bool> uniform(const PerInstance &predicate) {
    std::optional<bool> value;
    for (const Tensor &t : predicate) {
      bool b = t.intAt(0) != 0;
      if (value && *value != b)
        return std::nullopt;
      value = b;
    }
    return value;
  }

  static bool hasCollective(const Op &op) {
    bool found = false;
    for (Block *region : op.regions())
      walkOps(*region,
              [&](Op &inner) { found |= opInfo(inner.kind).group == OpGroup::Collective; });
    return found;
  }

  std::vector<PerInstance> runControlFlow(const Op &op, const Instances &instances,
                                          const std::vector<const PerInstance *> &operands,
                                          Scope &scope) {
    std::vector<PerInstance> values;
    for (const PerInstance *v : operands)
      values.push_back(*v);
    try {
      return runControlFlowOn(op, instances, std::move(values), scope, -1);
    } catch (const NotUniform &) {
    }
    // Devices disagree on a predicate: each takes its own path, which is
    // sound only when no collective waits for the others.
    if (hasCollective(op))
      fail(op, "its predicate differs between devices, and a collective inside would wait "
               "for devices that took another path (compute the predicate from replicated "
               "values, or all_reduce it)");
    std::vector<PerInstance> results(op.results.size());
    for (size_t j = 0; j < instances.count(); ++j) {
      Instances one;
      one.mesh = instances.mesh;
      one.manualAxes = instances.manualAxes;
      one.coords.push_back(instances.coords[j]);
      std::vector<PerInstance> mine;
      for (const PerInstance *v : operands)
        mine.push_back({v->at(j)});
      std::vector<PerInstance> out =
          runControlFlowOn(op, one, std::move(mine), scope, static_cast<int64_t>(j));
      for (size_t r = 0; r < out.size(); ++r)
        results[r].push_back(std::move(out[r].at(0)));
    }
    return results;
  }

  struct NotUniform {};

  bool predicate(const Op &op, const PerInstance &p, bool perInstance) {
    std::optional<bool> value = uniform(p);
    if (!value) {
      if (!perInstance)
        throw NotUniform{};
      fail(op, "predicate differs between devices");
    }
    return *value;
  }

  /// Runs `op` on `values` (its operands); `select` >= 0 when it runs on
  /// that one instance of the enclosing values.
  std::vector<PerInstance> runControlFlowOn(const Op &op, const Instances &instances,
                                            std::vector<PerInstance> values, Scope &scope,
                                            int64_t select) {
    bool alone = select >= 0;
    if (op.kind == OpKind::If) {
      const Block &branch = predicate(op, values.at(0), alone) ? *op.body : *op.elseBody;
      return runBlock(branch, instances, {}, &scope, select);
    }
    if (op.kind == OpKind::While) {
      while (predicate(op, runBlock(*op.cond, instances, values, &scope, select).at(0), alone))
        values = runBlock(*op.body, instances, std::move(values), &scope, select);
      return values;
    }
    if (op.kind == OpKind::Call) {
      // A call means inlining the callee: its body on the arguments.
      const Function *callee = module_.findFunction(op.get(attrs::callee, ""));
      if (!callee)
        fail(op, "unknown function");
      return runBlock(callee->body, instances, std::move(values));
    }
    int64_t lower = op.get(attrs::lower, 0), upper = op.get(attrs::upper, 0);
    int64_t step = op.get(attrs::loopStep, 1);
    for (int64_t i = lower; i < upper;) {
      Tensor index(TensorType{{}, DType::I64});
      index.setInt(0, static_cast<uint64_t>(i));
      std::vector<PerInstance> args;
      args.push_back(PerInstance(instances.count(), index));
      for (PerInstance &v : values)
        args.push_back(std::move(v));
      values = runBlock(*op.body, instances, std::move(args), &scope, select);
      if (__builtin_add_overflow(i, step, &i))
        break;
    }
    return values;
  }

  const Module &module_;
};

} // namespace
} // namespace detail

std::vector<Tensor> runFunction(const Module &module, const Function &fn,
                                const std::vector<Tensor> &args) {
  const Block &body = fn.body;
  if (args.size() != body.args.size())
    throw Error(
        fmt::format("@{} takes {} arguments, {} given", fn.name, body.args.size(), args.size()),
        fn.loc);
  std::vector<detail::PerInstance> values;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].type() != body.args[i]->type)
      throw Error(fmt::format("argument %{} must be {}: got {}", body.args[i]->name,
                              body.args[i]->type.str(), args[i].type().str()),
                  body.args[i]->loc);
    values.push_back({args[i]});
  }
  detail::Instances top;
  top.coords.emplace_back();
  std::vector<detail::PerInstance> returned =
      detail::Runner(module).runBlock(body, top, std::move(values));
  std::vector<Tensor> results;
  for (detail::PerInstance &r : returned)
    results.push_back(std::move(r.at(0)));
  return results;
}

} // namespace shardc::interp
