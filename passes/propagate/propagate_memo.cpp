// propagate-shardings, part 8: replaying repeated edge visits. A visit of an
// edge is a pure function of what its key (below) holds; the driver
// (propagate.cpp) looks the key up before projecting and deciding, and
// applies a recorded outcome the way store() applies a computed one. The
// generated 10,000-op program of repeated layers visits edges about 20,000
// times with a few dozen distinct keys.
//
// Keys are words. A sharding is written out once, with its mesh name, dims
// (open, priority, axes) and replicated axes, every axis with its source
// location, and numbered; a key holds the number. The mesh a tensor's
// sharding names and the edge's mesh, both in the key, decide whether it
// takes part in the visit.
#include "passes/propagate/PropagateInternal.h"

namespace shardc::propagation {
namespace {

/// Distinct outcomes kept at most: a program with no repeated visits would
/// otherwise keep one per visit for nothing.
constexpr size_t kMaxOutcomes = 1 << 16;

} // namespace

uint64_t EdgeMemo::shardingNumber(const Slot &slot, const std::vector<uint64_t> &changedAt,
                                  uint64_t clock) {
  if (numberOfSlot_.size() < changedAt.size())
    numberOfSlot_.resize(changedAt.size(), {0, 0});
  auto &[takenAt, number] = numberOfSlot_[slot.id];
  if (number != 0 && changedAt[slot.id] <= takenAt)
    return number;
  const Storage &s = *slot.sharding;
  if (!s) {
    number = 0;
    return 0;
  }
  scratch_.clear();
  appendKey(scratch_, *s, true);
  takenAt = clock;
  number = shardingNumbers_.try_emplace(scratch_, shardingNumbers_.size() + 1).first->second;
  return number;
}

void EdgeMemo::key(const Edge &edge, int stage, const Mesh &mesh,
                   const std::vector<uint64_t> &changedAt, uint64_t clock) {
  key_.clear();
  key_.push_back(reinterpret_cast<uintptr_t>(edge.rule));
  key_.push_back(reinterpret_cast<uintptr_t>(&mesh));
  key_.push_back(static_cast<uint64_t>(edgeDirections(edge, stage)));
  key_.push_back(uint64_t{edge.passThroughOp} | uint64_t{edge.broadcast} << 1 |
                 uint64_t{edge.elementwise} << 2 | uint64_t{edge.multiUseOperand} << 3);
  appendKey(key_, edge.forbidden, false);
  key_.push_back(edge.operands.size());
  key_.push_back(edge.results.size());
  auto tensor = [&](const Slot &slot) {
    // A value used twice by the op is updated twice, the second time from
    // the first update: the same shardings on two values would not be. So
    // each tensor names the first tensor of the edge that is its value.
    uint64_t same = 0;
    while (slotAt(edge, same).sharding != slot.sharding)
      ++same;
    key_.push_back(same);
    key_.push_back(static_cast<uint64_t>(slot.elements));
    appendKey(key_, slot.blocked, false);
    key_.push_back(shardingNumber(slot, changedAt, clock));
  };
  for (const Slot &slot : edge.operands)
    tensor(slot);
  for (const Slot &slot : edge.results)
    tensor(slot);
}

const EdgeOutcome *EdgeMemo::find() const {
  auto it = outcomes_.find(key_);
  return it == outcomes_.end() ? nullptr : &it->second;
}

void EdgeMemo::insert(EdgeOutcome outcome) {
  if (outcomes_.size() < kMaxOutcomes)
    outcomes_.emplace(key_, std::move(outcome));
}

} // namespace shardc::propagation
