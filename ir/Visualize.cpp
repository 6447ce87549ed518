// Terminal pictures of sharded tensors (ir/Visualize.h), drawn from the
// device blocks of ir/ShardingLayout.h:
//   1. group the devices by the block they hold (their shard indices);
//   2. per picture (one per block of the leading dims), a grid of cells,
//      each labelled with its devices;
//   3. column widths in proportion to the blocks' extents of the last dim,
//      row heights to those of the one before, within VisualizeOptions::maxWidth;
//   4. draw with box-drawing characters, a colour per block on a terminal.
#include "ir/Visualize.h"

#include "ir/AxisTypes.h"
#include "ir/Printer.h"
#include "ir/ShardingLayout.h"

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace shardc {
namespace {

/// Beyond these a picture is unreadable, or huge: it says so instead.
constexpr int64_t kMaxDevices = int64_t{1} << 16;
constexpr int64_t kMaxBlocksPerDim = 64;
constexpr int64_t kMaxPictures = 16;
/// A label longer than this lists the first two devices, the last, and a count.
constexpr size_t kMaxLabel = 32;
/// Content lines of a full block of a 2-D grid, and of all its rows together.
constexpr int kMaxRowHeight = 3;
constexpr int kGridHeight = 12;
/// Interior width of the one box of a rank-0 tensor, at least.
constexpr int kScalarWidth = 9;

struct Colour {
  fmt::terminal_color bg, fg;
};
const Colour kPalette[] = {
    {fmt::terminal_color::blue, fmt::terminal_color::bright_white},
    {fmt::terminal_color::green, fmt::terminal_color::black},
    {fmt::terminal_color::magenta, fmt::terminal_color::bright_white},
    {fmt::terminal_color::cyan, fmt::terminal_color::black},
    {fmt::terminal_color::red, fmt::terminal_color::bright_white},
    {fmt::terminal_color::yellow, fmt::terminal_color::black},
    {fmt::terminal_color::bright_blue, fmt::terminal_color::black},
    {fmt::terminal_color::bright_green, fmt::terminal_color::black},
    {fmt::terminal_color::bright_magenta, fmt::terminal_color::black},
    {fmt::terminal_color::bright_cyan, fmt::terminal_color::black},
    {fmt::terminal_color::bright_red, fmt::terminal_color::black},
    {fmt::terminal_color::bright_yellow, fmt::terminal_color::black},
};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

std::string repeat(const char *s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += s;
  return out;
}

/// `0`, `0,1`, `0-3`, `0-3,8-11`: runs of three or more as ranges.
std::string deviceList(const std::vector<int64_t> &ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
      ++j;
    out += out.empty() ? "" : ",";
    if (j - i >= 2) {
      out += fmt::format("{}-{}", ids[i], ids[j]);
      i = j;
    } else {
      out += std::to_string(ids[i]);
    }
  }
  if (out.size() > kMaxLabel)
    out = fmt::format("{},{},...,{} ({} devices)", ids[0], ids[1], ids.back(), ids.size());
  return out;
}

/// Splits `total` columns among blocks in proportion to `weights`, none
/// below its `minimum`. Blocks of equal weight and minimum get equal sizes:
/// the remainder of the division is left unused rather than spread unevenly.
std::vector<int> proportionalSizes(const std::vector<int64_t> &weights, int total,
                                   const std::vector<int> &minimum) {
  const size_t n = weights.size();
  std::vector<double> w(weights.begin(), weights.end());
  if (std::all_of(w.begin(), w.end(), [](double x) { return x <= 0; }))
    std::fill(w.begin(), w.end(), 1.0);
  // Blocks whose share is below the minimum get the minimum; the others
  // share what is left. Repeat until no more blocks drop below it.
  std::vector<bool> fixed(n, false);
  double remaining = 0, rest = 0;
  for (bool changed = true; changed;) {
    changed = false;
    remaining = total;
    rest = 0;
    for (size_t i = 0; i < n; ++i) {
      remaining -= fixed[i] ? minimum[i] : 0;
      rest += fixed[i] ? 0 : w[i];
    }
    for (size_t i = 0; i < n; ++i)
      if (!fixed[i] && (rest <= 0 || remaining * w[i] / rest < minimum[i]))
        fixed[i] = changed = true;
  }
  std::vector<int> sizes = minimum;
  for (size_t i = 0; i < n; ++i)
    if (!fixed[i])
      sizes[i] = std::max(minimum[i], static_cast<int>(std::floor(remaining * w[i] / rest)));
  return sizes;
}

/// The blocks of one dim: how many, and the extent of each.
struct DimBlocks {
  int64_t count = 1;
  int64_t full = 1; // localDimSize
  std::vector<int64_t> extents;
};

DimBlocks dimBlocks(int64_t dimSize, int64_t shards) {
  DimBlocks b;
  b.count = shards;
  b.full = localDimSize(dimSize, shards);
  for (int64_t i = 0; i < shards; ++i)
    b.extents.push_back(shardExtent(dimSize, shards, i));
  return b;
}

/// `7 = 2+2+2+1 (1 padded)`; runs of four or more equal extents as `2*5`.
std::string paddingNote(int64_t dimSize, const DimBlocks &b) {
  std::string terms;
  for (size_t i = 0; i < b.extents.size();) {
    size_t j = i;
    while (j < b.extents.size() && b.extents[j] == b.extents[i])
      ++j;
    size_t run = j - i;
    for (size_t k = 0; k < (run >= 4 ? 1 : run); ++k) {
      terms += terms.empty() ? "" : "+";
      terms += run >= 4 ? fmt::format("{}*{}", b.extents[i], run) : std::to_string(b.extents[i]);
    }
    i = j;
  }
  return fmt::format("{} = {} ({} padded)", dimSize, terms, b.full * b.count - dimSize);
}

struct Cell {
  std::string label;
  bool empty = false; // the block holds only padding
  int colour = 0;
};

/// One cell's line `line` of `height`: the label centred on the middle line,
/// shading (`░`) around it when the block is empty.
std::string cellLine(const Cell &cell, int width, int line, int height, bool colour) {
  const char *fill = cell.empty ? "\u2591" : " ";
  std::string text;
  if (line == (height - 1) / 2) {
    int label = static_cast<int>(cell.label.size());
    int left = (width - label) / 2, right = width - label - left;
    text = repeat(fill, left - 1) + " " + cell.label + " " + repeat(fill, right - 1);
  } else {
    text = repeat(fill, width);
  }
  if (!colour)
    return text;
  const Colour &c = kPalette[cell.colour % kPaletteSize];
  return fmt::format(fmt::bg(c.bg) | fmt::fg(c.fg), "{}", text);
}

/// `left` + one run of `─` per column joined by `mid` + `right`.
std::string ruleLine(const std::vector<int> &widths, const char *left, const char *mid,
                     const char *right) {
  std::string out = left;
  for (size_t j = 0; j < widths.size(); ++j)
    out += (j ? mid : "") + repeat("\u2500", widths[j]);
  return out + right + "\n";
}

std::string drawGrid(const std::vector<std::vector<Cell>> &cells, const std::vector<int> &widths,
                     const std::vector<int> &heights, bool colour) {
  std::string out = ruleLine(widths, "\u250c", "\u252c", "\u2510");
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0)
      out += ruleLine(widths, "\u251c", "\u253c", "\u2524");
    for (int line = 0; line < heights[i]; ++line) {
      out += "\u2502";
      for (size_t j = 0; j < widths.size(); ++j)
        out += cellLine(cells[i][j], widths[j], line, heights[i], colour) + "\u2502";
      out += "\n";
    }
  }
  return out + ruleLine(widths, "\u2514", "\u2534", "\u2518");
}

/// a * b, saturating (a product of many shard counts may not fit).
int64_t saturatingMul(int64_t a, int64_t b) {
  return b != 0 && a > std::numeric_limits<int64_t>::max() / b ? std::numeric_limits<int64_t>::max()
                                                               : a * b;
}

} // namespace

std::string visualizeSharding(const Mesh &mesh, const TensorType &type, const Sharding &sharding,
                              const VisualizeOptions &options) {
  const std::vector<int64_t> &shape = type.shape;
  const size_t rank = shape.size();
  if (mesh.deviceCount() > kMaxDevices)
    return fmt::format("({} devices: too many to draw)\n", mesh.deviceCount());
  std::vector<DimBlocks> dims;
  for (size_t d = 0; d < rank; ++d) {
    int64_t shards = d < sharding.dims.size() ? shardCount(sharding.dims[d], mesh) : 1;
    if (d + 2 >= rank && shards > kMaxBlocksPerDim)
      return fmt::format("(dim {} has {} blocks: too many to draw)\n", d, shards);
    dims.push_back(dimBlocks(shape[d], std::min(shards, kMaxDevices)));
  }

  // 1. Which devices hold each block (keyed by shard indices).
  std::map<std::vector<int64_t>, std::vector<int64_t>> holders;
  for (const DeviceBlock &b : deviceBlocks(mesh, shape, sharding))
    holders[b.index].push_back(b.device);

  // 2. The cells of every picture: the grid is dims rank-2 (rows) and rank-1
  //    (columns); the leading dims choose the picture.
  const size_t lead = rank >= 2 ? rank - 2 : 0;
  const DimBlocks none;
  const DimBlocks &rows = rank >= 2 ? dims[rank - 2] : none;
  const DimBlocks &cols = rank >= 1 ? dims[rank - 1] : none;
  int64_t pictures = 1;
  for (size_t d = 0; d < lead; ++d)
    pictures = saturatingMul(pictures, dims[d].count);
  const int64_t drawn = std::min(pictures, kMaxPictures);

  std::vector<std::vector<std::vector<Cell>>> grids;
  std::vector<std::string> headings;
  std::vector<int64_t> leadIndex(lead, 0);
  size_t labelWidth = 0;
  for (int64_t p = 0; p < drawn; ++p) {
    std::vector<std::string> parts;
    bool leadEmpty = false;
    for (size_t d = 0; d < lead; ++d) {
      parts.push_back(fmt::format("dim{} block {}/{}", d, leadIndex[d], dims[d].count));
      leadEmpty |= dims[d].extents[leadIndex[d]] == 0;
    }
    headings.push_back(
        lead ? fmt::format("[{}]{}\n", fmt::join(parts, ", "), leadEmpty ? " padding only" : "")
             : "");
    auto &grid = grids.emplace_back(rows.count, std::vector<Cell>(cols.count));
    for (int64_t i = 0; i < rows.count; ++i) {
      for (int64_t j = 0; j < cols.count; ++j) {
        std::vector<int64_t> index = leadIndex;
        if (rank >= 2)
          index.push_back(i);
        if (rank >= 1)
          index.push_back(j);
        Cell &cell = grid[i][j];
        auto it = holders.find(index);
        cell.label = mesh.isEmpty() ? "all" : it == holders.end() ? "-" : deviceList(it->second);
        cell.empty =
            leadEmpty || (rank >= 2 && rows.extents[i] == 0) || (rank >= 1 && cols.extents[j] == 0);
        // Neighbours differ: across a row by 1, down a column by cols.count
        // (plus 1 when that is a multiple of the palette size).
        cell.colour = static_cast<int>((p * rows.count * cols.count + i * cols.count + j +
                                        (cols.count % kPaletteSize == 0 ? i : 0)) %
                                       kPaletteSize);
        labelWidth = std::max(labelWidth, cell.label.size());
      }
    }
    for (size_t d = lead; d-- > 0;) { // next combination, last leading dim fastest
      if (++leadIndex[d] < dims[d].count)
        break;
      leadIndex[d] = 0;
    }
  }

  // 3. Sizes: columns share the width, each at least a space either side of
  //    the widest label (and a shade when its blocks are empty); rows get up
  //    to kMaxRowHeight lines.
  const int labelMinimum = static_cast<int>(labelWidth) + 2;
  std::vector<int> minimum(cols.count, labelMinimum);
  for (int64_t j = 0; j < cols.count && rank >= 1; ++j)
    if (cols.extents[j] == 0)
      minimum[j] += 2;
  std::vector<int> widths =
      rank == 0 ? std::vector<int>{std::max(labelMinimum, kScalarWidth)}
                : proportionalSizes(cols.extents,
                                    options.maxWidth - 1 - static_cast<int>(cols.count), minimum);
  std::vector<int> heights(rows.count, 1);
  if (rank >= 2) {
    int full = std::clamp(kGridHeight / static_cast<int>(rows.count), 1, kMaxRowHeight);
    for (int64_t i = 0; i < rows.count; ++i) {
      double share = rows.full > 0 ? static_cast<double>(rows.extents[i]) / rows.full : 1.0;
      heights[i] = std::max(1, static_cast<int>(std::lround(full * share)));
    }
  }

  // 4. Draw, then say which dims are padded.
  std::string out;
  for (size_t p = 0; p < grids.size(); ++p)
    out += headings[p] + drawGrid(grids[p], widths, heights, options.color);
  if (pictures > drawn)
    out += fmt::format("({} more blocks of the leading dims not drawn)\n", pictures - drawn);
  for (size_t d = 0; d < rank; ++d)
    if (dims[d].count > 1 && shape[d] % dims[d].count != 0)
      out += fmt::format("dim {}: {}\n", d, paddingNote(shape[d], dims[d]));
  return out;
}

namespace {

/// One sharded thing to draw: a value, a function's declared result, or a
/// seed-style `sharding<...> : tensor<...>`.
struct Item {
  std::string name; // `%x`, `@main result 0`, `sharding<...> : tensor<...>`
  std::string role; // `param 0 of @main`, `result of matmul`
  Loc loc;
  const TensorType *type = nullptr; // null when not written
  const Sharding *sharding = nullptr;
  std::string note;
  /// The axis types where the value is (inside auto_axes / explicit_axes
  /// they differ from the mesh's).
  AxisTypeScope axisTypes;
};

/// The sharding a value has: its own, or for an op that fixes its result's
/// sharding by attribute (reshard, sharding_constraint, manual_computation)
/// that one. Propagation will fill in Value::sharding everywhere.
const Sharding *knownSharding(const Value &v) {
  if (v.sharding)
    return &*v.sharding;
  const Op *op = v.definingOp;
  if (!op)
    return nullptr;
  const char *attr = op->kind == OpKind::ManualComputation ? "out_shardings"
                     : op->kind == OpKind::Reshard || op->kind == OpKind::ShardingConstraint
                         ? "sharding"
                         : nullptr;
  const Attribute *a = attr ? op->attr(attr) : nullptr;
  if (!a || static_cast<size_t>(v.resultIndex) >= a->shardings.size())
    return nullptr;
  return &a->shardings[v.resultIndex];
}

class Collector {
public:
  explicit Collector(const Module &module) : module_(module) {}
  std::vector<Item> items;

  void value(const Value &v, std::string role, const std::string &note) {
    if (const Sharding *s = knownSharding(v))
      items.push_back(Item{"%" + v.name, std::move(role), v.loc, v.typeKnown ? &v.type : nullptr, s,
                           note, scope_});
  }

  /// Op results, then manual_computation bodies (arguments, then ops).
  void ops(const Block &block, const std::string &note) {
    for (const auto &op : block.ops) {
      for (const auto &r : op->results)
        value(*r,
              op->results.size() == 1 ? fmt::format("result of {}", op->name())
                                      : fmt::format("result {} of {}", r->resultIndex, op->name()),
              note);
      if (isControlFlow(op->kind)) {
        // Regions run on the same devices: their values are drawn as any.
        for (Block *region : op->regions()) {
          for (size_t i = 0; i < region->args.size(); ++i)
            value(*region->args[i], fmt::format("region arg {} of {}", i, op->name()), note);
          ops(*region, note);
        }
        continue;
      }
      if (!op->body)
        continue;
      if (isAxesRegion(*op)) {
        // Global shapes inside; only the axis types change.
        AxisTypeScope outer = scope_;
        scope_ = bodyScope(*op, module_, outer);
        for (size_t i = 0; i < op->body->args.size(); ++i)
          value(*op->body->args[i], fmt::format("body arg {} of {}", i, op->name()), note);
        ops(*op->body, note);
        scope_ = std::move(outer);
        continue;
      }
      const Attribute *manual = op->attr(attrs::manualAxes);
      std::vector<std::string> axes;
      for (const AxisRef &a : manual ? manual->axes : std::vector<AxisRef>{})
        axes.push_back(a.str());
      std::string bodyNote =
          fmt::format("inside {} over {{{}}}: each group along those axes has "
                      "its own local tensor; boxes list the devices of all groups",
                      op->name(), fmt::join(axes, ", "));
      for (size_t i = 0; i < op->body->args.size(); ++i)
        value(*op->body->args[i], fmt::format("body arg {} of {}", i, op->name()), bodyNote);
      ops(*op->body, bodyNote);
    }
  }

  void function(const Function &f) {
    for (size_t i = 0; i < f.body.args.size(); ++i)
      value(*f.body.args[i], fmt::format("param {} of @{}", i, f.name), "");
    ops(f.body, "");
    for (size_t i = 0; i < f.results.size(); ++i) {
      const ResultSpec &r = f.results[i];
      if (r.sharding)
        items.push_back(Item{fmt::format("@{} result {}", f.name, i),
                             "",
                             r.loc,
                             r.typeInvalid ? nullptr : &r.type,
                             &*r.sharding,
                             "",
                             {}});
    }
  }

  /// The seed-style snippet: declarations, statements and sharded types,
  /// in source order.
  void snippet(const Module &module) {
    size_t first = items.size();
    for (const auto &arg : module.snippet.body.args)
      value(*arg, "declaration", "");
    ops(module.snippet.body, "");
    for (const ShardedTypeDecl &d : module.typeDecls)
      items.push_back(Item{"sharded type", "", d.loc, &d.type, &d.sharding, "", {}});
    std::stable_sort(items.begin() + first, items.end(), [](const Item &a, const Item &b) {
      return std::make_pair(a.loc.line, a.loc.col) < std::make_pair(b.loc.line, b.loc.col);
    });
  }

private:
  const Module &module_;
  AxisTypeScope scope_;
};

std::string header(const Item &item, const Mesh *mesh) {
  std::string out = item.name;
  if (!item.role.empty())
    out += "  " + item.role;
  if (item.loc.known())
    out += fmt::format("  {}:{}:{}", item.loc.file->name(), item.loc.line, item.loc.col);
  out += "\n";
  auto line = [&](const char *key, const std::string &value) {
    out += fmt::format("  {:<9} {}\n", key, value);
  };
  if (item.type)
    line("type", printType(*item.type));
  line("sharding", printSharding(*item.sharding));
  if (mesh)
    line("mesh", fmt::format("@{} = {}", mesh->name, printMeshBody(*mesh)));
  if (item.type) {
    // A mesh with an explicit axis: each axis's type beside the JAX type, as
    // hover and --explain show it (jax.typeof with the abstract mesh).
    std::string axisTypes = mesh && (mesh->hasExplicitAxis() || item.axisTypes.anyExplicit(*mesh))
                                ? "   (" + item.axisTypes.text(*mesh) + ")"
                                : "";
    line("jax", jaxType(*item.type, item.sharding) + axisTypes);
    if (mesh) {
      TensorType local{localShape(item.type->shape, *item.sharding, *mesh), item.type->dtype};
      bool padded = false;
      for (size_t d = 0; d < local.shape.size() && d < item.sharding->dims.size(); ++d)
        padded |= local.shape[d] * shardCount(item.sharding->dims[d], *mesh) != item.type->shape[d];
      line("local", printType(local) + (padded ? " per device (padded)" : " per device"));
    }
  }
  if (!item.note.empty())
    line("note", item.note);
  return out;
}

} // namespace

std::string visualizeModule(const Module &module, const VisualizeOptions &options) {
  Collector collect(module);
  collect.snippet(module);
  for (const auto &f : module.functions)
    collect.function(*f);
  if (collect.items.empty())
    return "no value of this program has a sharding\n";

  std::string out;
  for (const Item &item : collect.items) {
    const Mesh *mesh = module.findMesh(item.sharding->meshName);
    out += (out.empty() ? "" : "\n") + header(item, mesh);
    if (!mesh)
      out += fmt::format("(no mesh @{}: nothing to draw)\n", item.sharding->meshName);
    else if (!item.type)
      out += "(no type: nothing to draw)\n";
    else
      out += visualizeSharding(*mesh, *item.type, *item.sharding, options);
  }
  return out;
}

} // namespace shardc
