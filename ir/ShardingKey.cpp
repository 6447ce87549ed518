#include "ir/ShardingKey.h"

#include <algorithm>
#include <cstring>

namespace shardc {

size_t KeyWordsHash::operator()(const KeyWords &words) const {
  // Multiply-xor per word, then a final mix (a word's high bits reach the
  // low bits the buckets use).
  uint64_t h = words.size();
  for (uint64_t w : words)
    h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  return static_cast<size_t>(h ^ (h >> 32));
}

void appendKey(KeyWords &out, const std::string &text) {
  out.push_back(text.size());
  for (size_t i = 0; i < text.size(); i += 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, text.data() + i, std::min<size_t>(8, text.size() - i));
    out.push_back(chunk);
  }
}

void appendKey(KeyWords &out, const std::vector<AxisRef> &axes, bool withLoc) {
  out.push_back(axes.size());
  for (const AxisRef &axis : axes) {
    appendKey(out, axis.name);
    out.push_back(static_cast<uint64_t>(axis.preSize));
    out.push_back(static_cast<uint64_t>(axis.size));
    if (withLoc) {
      out.push_back(reinterpret_cast<uintptr_t>(axis.loc.file));
      out.push_back(static_cast<uint64_t>(static_cast<uint32_t>(axis.loc.line)) << 32 |
                    static_cast<uint32_t>(axis.loc.col));
      out.push_back(static_cast<uint64_t>(static_cast<uint32_t>(axis.loc.length)));
    }
  }
}

void appendKey(KeyWords &out, const Sharding &sharding, bool withLoc) {
  appendKey(out, sharding.meshName);
  out.push_back(sharding.dims.size());
  for (const DimSharding &dim : sharding.dims) {
    out.push_back(uint64_t{dim.open} | uint64_t{dim.priority.has_value()} << 1);
    out.push_back(static_cast<uint64_t>(dim.priority.value_or(0)));
    appendKey(out, dim.axes, withLoc);
  }
  appendKey(out, sharding.replicated, withLoc);
}

void appendReshardKey(KeyWords &out, const TensorType &type, const Sharding &source,
                      const std::string &partialKind, const std::vector<AxisRef> &partialAxes,
                      const Sharding &target) {
  out.push_back(static_cast<uint64_t>(type.dtype));
  out.push_back(type.shape.size());
  for (int64_t extent : type.shape)
    out.push_back(static_cast<uint64_t>(extent));
  appendKey(out, source, false);
  appendKey(out, partialKind);
  appendKey(out, partialAxes, false);
  appendKey(out, target, false);
}

} // namespace shardc
