// Layouts in atoms for the reshard planner: every axis or sub-axis a request
// names is cut into pieces (atoms) that all of them share, so that one
// planner step moves one atom. E.g. on <["x"=4]>, source [{"x"}] and target
// [{"x":(1)2}, {"x":(2)2}] cut "x" at 2: atoms (1)2 and (2)2, and the source
// dim is the run [(1)2, (2)2].
#include "passes/reshard/ReshardPlannerInternal.h"

#include "ir/ShardingLayout.h"
#include "support/BlockLayout.h"

#include <algorithm>
#include <charconv>

namespace shardc::reshard {

namespace {

/// Appends `a` as "axis:pre:size," (no temporaries: the planner's search
/// makes a key per layout it reaches).
void appendAtom(std::string &k, const Atom &a) {
  char buffer[72];
  char *end = buffer;
  for (int64_t v : {static_cast<int64_t>(a.axis), a.pre, a.size}) {
    if (v >= 0 && v < 10) // most axes and sizes: one digit
      *end++ = static_cast<char>('0' + v);
    else
      end = std::to_chars(end, buffer + sizeof buffer, v).ptr;
    *end++ = ':';
  }
  end[-1] = ',';
  k.append(buffer, end);
}

} // namespace

std::string Layout::key() const {
  std::string k;
  k.reserve(16 * (dims.size() + partial.size() + 1));
  for (const auto &dim : dims) {
    k += '[';
    for (const Atom &a : dim)
      appendAtom(k, a);
    k += ']';
  }
  k += 'p';
  for (const Atom &a : partial)
    appendAtom(k, a);
  return k;
}

AtomTable::AtomTable(const Mesh &mesh) : mesh_(&mesh) {
  for (const MeshAxis &axis : mesh.axes)
    cuts_.push_back({1, std::max<int64_t>(axis.size, 1)});
}

bool AtomTable::addCuts(const AxisRef &ref) {
  int axis = mesh_->axisIndex(ref.name);
  if (axis < 0)
    return false;
  int64_t n = mesh_->axes[axis].size;
  int64_t pre = ref.effectivePreSize();
  int64_t end = pre * ref.effectiveSize(n);
  if (pre < 1 || end > n || end < pre)
    return false;
  auto &cuts = cuts_[axis];
  for (int64_t cut : {pre, end})
    if (std::find(cuts.begin(), cuts.end(), cut) == cuts.end())
      cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), cut), cut);
  return true;
}

void AtomTable::addPrimeCuts(int axis) {
  int64_t n = mesh_->axes[axis].size;
  int64_t pre = 1;
  for (int64_t p = 2; pre < n;) {
    if ((n / pre) % p != 0) {
      ++p;
      continue;
    }
    pre *= p;
    addCuts(AxisRef{mesh_->axes[axis].name, pre == n ? 0 : 1, pre == n ? 0 : pre, {}});
  }
}

bool AtomTable::nests() const {
  for (const auto &cuts : cuts_)
    for (size_t i = 1; i < cuts.size(); ++i)
      if (cuts[i] % cuts[i - 1] != 0)
        return false;
  return true;
}

std::vector<Atom> AtomTable::expand(const AxisRef &ref) const {
  std::vector<Atom> atoms;
  int axis = mesh_->axisIndex(ref.name);
  if (axis < 0)
    return atoms;
  int64_t pre = ref.effectivePreSize();
  int64_t end = pre * ref.effectiveSize(mesh_->axes[axis].size);
  const auto &cuts = cuts_[axis];
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    if (cuts[i] >= pre && cuts[i + 1] <= end && cuts[i + 1] > cuts[i])
      atoms.push_back(Atom{axis, cuts[i], cuts[i + 1] / cuts[i]});
  return atoms;
}

std::vector<Atom> AtomTable::allAtoms() const {
  std::vector<Atom> atoms;
  for (size_t axis = 0; axis < cuts_.size(); ++axis)
    for (const Atom &a : expand(AxisRef{mesh_->axes[axis].name, 0, 0, {}}))
      atoms.push_back(a);
  return atoms;
}

std::optional<Layout> AtomTable::layoutOf(const Sharding &sharding,
                                          const std::vector<AxisRef> &partial) const {
  Layout layout;
  for (const DimSharding &dim : sharding.dims) {
    auto &atoms = layout.dims.emplace_back();
    for (const AxisRef &ref : dim.axes) {
      if (mesh_->axisIndex(ref.name) < 0)
        return std::nullopt;
      for (const Atom &a : expand(ref))
        atoms.push_back(a);
    }
  }
  for (const AxisRef &ref : partial) {
    if (mesh_->axisIndex(ref.name) < 0)
      return std::nullopt;
    for (const Atom &a : expand(ref))
      layout.partial.push_back(a);
  }
  return layout;
}

std::vector<AxisRef> AtomTable::toAxes(const std::vector<Atom> &atoms) const {
  std::vector<AxisRef> axes;
  for (size_t i = 0; i < atoms.size();) {
    Atom merged = atoms[i++];
    while (i < atoms.size() && atoms[i].axis == merged.axis &&
           atoms[i].pre == merged.pre * merged.size)
      merged.size *= atoms[i++].size;
    const MeshAxis &axis = mesh_->axes[merged.axis];
    if (merged.pre == 1 && merged.size == axis.size)
      axes.push_back(AxisRef{axis.name, 0, 0, {}});
    else
      axes.push_back(AxisRef{axis.name, merged.pre, merged.size, {}});
  }
  return axes;
}

Sharding AtomTable::toSharding(const Layout &layout) const {
  Sharding s = Sharding::replicatedOn(mesh_->name, layout.dims.size());
  for (size_t d = 0; d < layout.dims.size(); ++d)
    s.dims[d].axes = toAxes(layout.dims[d]);
  return s;
}

int64_t atomProduct(const std::vector<Atom> &atoms) {
  int64_t n = 1;
  for (const Atom &a : atoms)
    n *= a.size;
  return n;
}

std::vector<int64_t> localShapeOf(const Layout &layout, const std::vector<int64_t> &shape) {
  std::vector<int64_t> local = shape;
  for (size_t d = 0; d < local.size() && d < layout.dims.size(); ++d)
    local[d] = localDimSize(local[d], atomProduct(layout.dims[d]));
  return local;
}

int64_t localBytes(const Layout &layout, const TensorType &type) {
  int64_t n = dtypeBytes(type.dtype);
  for (int64_t extent : localShapeOf(layout, type.shape))
    n *= extent;
  return n;
}

namespace {

/// A sharding's block at each mesh position, as a sum over the mesh axes:
/// block(p) = sum over axes a of table[a][coordinate of p along a]. An axis's
/// entry adds, for each of the sharding's axes and sub-axes on it, its digit
/// (the coordinate; a sub-axis': the middle digit of its axis reshaped)
/// weighted by its place in its dim's shard index and the dim's place in the
/// block number (per dim a radix). Table lookups instead of divisions: the
/// planner asks for the pairs of every permute it prices.
class BlockNumbering {
public:
  BlockNumbering(const Mesh &mesh, const Sharding &s, const std::vector<int64_t> &radix)
      : tables_(mesh.axes.size()) {
    for (size_t a = 0; a < mesh.axes.size(); ++a)
      tables_[a].assign(static_cast<size_t>(std::max<int64_t>(mesh.axes[a].size, 1)), 0);
    int64_t dimWeight = 1;
    for (size_t d = radix.size(); d-- > 0;) {
      int64_t weight = dimWeight;
      for (size_t i = d < s.dims.size() ? s.dims[d].axes.size() : 0; i-- > 0;) {
        const AxisRef &axis = s.dims[d].axes[i];
        int index = mesh.axisIndex(axis.name);
        if (index < 0)
          continue; // (unverified IR: shardIndex counts it as coordinate 0)
        std::vector<int64_t> &table = tables_[static_cast<size_t>(index)];
        const int64_t n = static_cast<int64_t>(table.size());
        const int64_t k = std::max<int64_t>(axis.effectiveSize(n), 1);
        // As axisCoordinate: the middle digit where the sub-axis divides its
        // axis, else the coordinate modulo its size.
        int64_t within = 1;
        if (axis.isSubAxis() && n % axis.preSize == 0 && (n / axis.preSize) % k == 0)
          within = support::subAxisStride(n, axis.preSize, k);
        // digit = c / within % k, counted up rather than divided.
        for (int64_t c = 0, digit = 0, run = 0; c < n; ++c) {
          table[static_cast<size_t>(c)] += digit * weight;
          if (++run == within) {
            run = 0;
            digit = digit + 1 == k ? 0 : digit + 1;
          }
        }
        weight *= k;
      }
      dimWeight *= radix[d];
    }
  }

  int64_t operator()(const std::vector<int64_t> &coords) const {
    int64_t id = 0;
    for (size_t a = 0; a < tables_.size(); ++a)
      id += tables_[a][static_cast<size_t>(coords[a])];
    return id;
  }

private:
  std::vector<std::vector<int64_t>> tables_;
};

/// Numbers `source`'s blocks 0, 1, ... and `target`'s with the same numbers;
/// returns how many there are, or none when a target block is held nowhere.
std::optional<size_t> denseBlocks(std::vector<int64_t> &source, std::vector<int64_t> &target) {
  std::vector<int64_t> blocks = source;
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  auto number = [&](int64_t &block) {
    auto it = std::lower_bound(blocks.begin(), blocks.end(), block);
    if (it == blocks.end() || *it != block)
      return false;
    block = it - blocks.begin();
    return true;
  };
  for (int64_t &block : source)
    number(block);
  for (int64_t &block : target)
    if (!number(block))
      return std::nullopt;
  return blocks.size();
}

} // namespace

std::optional<std::vector<std::pair<int64_t, int64_t>>>
permutePairs(const Mesh &mesh, const Sharding &from, const Sharding &to, size_t rank) {
  // A block is the vector of its per-dim shard indices, written as one
  // number: per dim a radix that holds both shardings' indices.
  auto shardsOf = [&](const Sharding &s, size_t d) {
    int64_t n = 1;
    if (d < s.dims.size())
      for (const AxisRef &axis : s.dims[d].axes) {
        const MeshAxis *full = mesh.findAxis(axis.name);
        n *= std::max<int64_t>(axis.effectiveSize(full ? full->size : 1), 1);
      }
    return n;
  };
  std::vector<int64_t> radix(rank);
  const int64_t devices = mesh.deviceCount();
  const int64_t sparse = 4 * devices + 1; // block numbers beyond: made dense
  int64_t blockNumbers = 1;               // (saturating at `sparse`)
  for (size_t d = 0; d < rank; ++d) {
    radix[d] = std::max(shardsOf(from, d), shardsOf(to, d));
    blockNumbers = radix[d] > sparse / blockNumbers ? sparse : blockNumbers * radix[d];
  }
  // Each position's block before and after (positions row-major over the
  // mesh axes, their coordinates counted up alongside).
  const BlockNumbering sourceBlock(mesh, from, radix), targetBlock(mesh, to, radix);
  const size_t n = static_cast<size_t>(devices);
  std::vector<int64_t> source(n), target(n), coords(mesh.axes.size(), 0);
  for (size_t p = 0; p < n; ++p) {
    source[p] = sourceBlock(coords);
    target[p] = targetBlock(coords);
    for (size_t a = coords.size(); a-- > 0;) {
      if (++coords[a] < std::max<int64_t>(mesh.axes[a].size, 1))
        break;
      coords[a] = 0;
    }
  }
  // The holders of each block in position order (a counting sort by block;
  // block numbers made dense first where they are sparse).
  size_t blocks = static_cast<size_t>(blockNumbers);
  if (blockNumbers == sparse) {
    std::optional<size_t> dense = denseBlocks(source, target);
    if (!dense)
      return std::nullopt;
    blocks = *dense;
  }
  std::vector<size_t> start(blocks + 1, 0);
  for (int64_t block : source)
    ++start[static_cast<size_t>(block) + 1];
  for (size_t b = 0; b < blocks; ++b)
    start[b + 1] += start[b];
  std::vector<size_t> next(start.begin(), start.end() - 1); // each block's first untaken holder
  std::vector<size_t> holders(n);
  {
    std::vector<size_t> fill = next;
    for (size_t p = 0; p < n; ++p)
      holders[fill[static_cast<size_t>(source[p])]++] = p;
  }
  // Keep a device's own block where it can (a pair [p, p] moves nothing);
  // every other device takes the lowest source of its block left.
  std::vector<bool> taken(n, false);
  std::vector<int64_t> targetOf(n, -1);
  for (size_t p = 0; p < n; ++p)
    if (source[p] == target[p]) {
      taken[p] = true;
      targetOf[p] = static_cast<int64_t>(p);
    }
  for (size_t p = 0; p < n; ++p) {
    if (source[p] == target[p])
      continue;
    const size_t block = static_cast<size_t>(target[p]);
    size_t &i = next[block];
    while (i < start[block + 1] && taken[holders[i]])
      ++i;
    if (i == start[block + 1])
      return std::nullopt;
    taken[holders[i]] = true;
    targetOf[holders[i]] = static_cast<int64_t>(p);
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(n);
  for (size_t s = 0; s < n; ++s)
    if (targetOf[s] >= 0)
      pairs.push_back({static_cast<int64_t>(s), targetOf[s]});
  return pairs;
}

} // namespace shardc::reshard
