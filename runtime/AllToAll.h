// The blocks of one all_to_all and the two ways they travel: point to point
// (AllToAll.cpp) and, when the whole group shares a node, through a shared
// memory window (SharedAllToAll.cpp). Internal to the runtime.
#pragma once

#include "runtime/Context.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace shardrt {

class SharedWindow;

/// Where the elements of one block live in a buffer: element e of the block
/// (in the block's own row-major order) is element
/// ((e - origin) / piece) * stride + (e - origin) % piece of `base`. A block
/// of a buffer split into n interleaved blocks has pieces of `piece` elements
/// every n * piece; a contiguous run has one endless piece.
struct BlockView {
  char *base;
  int64_t piece, stride, origin;
  static BlockView contiguous(char *base, int64_t origin) { return {base, INT64_MAX, 0, origin}; }
  char *at(int64_t e, int64_t size) const {
    int64_t i = e - origin;
    return base + ((i / piece) * stride + i % piece) * size;
  }
  /// How many elements from e on are contiguous here.
  int64_t runFrom(int64_t e) const { return piece - (e - origin) % piece; }
};

/// Copies elements [first, last) of a block between two views of it, one
/// memcpy per run that is contiguous in both.
inline void copyRange(const BlockView &dst, const BlockView &src, int64_t first, int64_t last,
                      int64_t size) {
  for (int64_t e = first; e < last;) {
    int64_t run = std::min({last - e, src.runFrom(e), dst.runFrom(e)});
    std::memcpy(dst.at(e, size), src.at(e, size), static_cast<size_t>(run * size));
    e += run;
  }
}

/// How a buffer holds its n blocks: each of `rows` rows is n pieces of
/// `piece` elements, piece j belonging to block j (one row: contiguous blocks).
struct Interleaved {
  int64_t rows, piece;
};

/// One member's all_to_all: n blocks of `block` elements of `size` bytes,
/// block j of the operand `in` (laid out as `from`) going to member j, and
/// member k's block arriving as block k of the result `out` (laid out as
/// `to`); this member is `me`.
struct AllToAllBlocks {
  MPI_Datatype type;
  int64_t n, block, size;
  Interleaved from, to;
  char *in, *out;
  int64_t me;

  /// Block j of the operand.
  BlockView source(int64_t j) const { return view(in, from, j); }
  /// Block k of the result.
  BlockView target(int64_t k) const { return view(out, to, k); }
  /// Block j of a buffer laid out as `layout`.
  BlockView view(char *buffer, Interleaved layout, int64_t j) const {
    char *base = buffer + j * layout.piece * size;
    if (layout.rows == 1)
      return BlockView::contiguous(base, 0);
    return {base, layout.piece, n * layout.piece, 0};
  }
  /// Copies elements [first, last) of every block to a place: block j to
  /// places[j], in one pass over those rows of the operand (the pieces of one
  /// row sit side by side). A null places[j].base skips block j.
  void scatterRows(const BlockView *places, int64_t first, int64_t last) const {
    int64_t piece = from.piece;
    for (int64_t lo = first; lo < last;) {
      int64_t row = lo / piece, hi = std::min(last, (row + 1) * piece); // within one row
      const char *pieces = in + (row * n * piece + lo - row * piece) * size;
      for (int64_t j = 0; j < n; ++j) {
        const BlockView &place = places[j];
        if (!place.base)
          continue;
        if (place.piece == INT64_MAX) // contiguous: no index arithmetic per run
          std::memcpy(place.base + (lo - place.origin) * size, pieces + j * piece * size,
                      static_cast<size_t>((hi - lo) * size));
        else
          copyRange(place, source(j), lo, hi, size);
      }
      lo = hi;
    }
  }
};

/// The all_to_all of strided blocks by point-to-point messages, in chunks
/// (AllToAll.cpp). Collective over `comm`.
void exchangePointToPoint(shardrt_context *ctx, MPI_Comm comm, const AllToAllBlocks &blocks);

/// The all_to_all through `window` (SharedAllToAll.cpp); false when it
/// could not be done so (nothing was moved; the group goes point to point
/// from now on). Collective over the window's group.
bool exchangeShared(shardrt_context *ctx, SharedWindow &window, const AllToAllBlocks &blocks);

/// Elements per chunk in which both exchanges move a block (128 KiB).
constexpr int64_t kAllToAllChunkBytes = int64_t(128) << 10;

} // namespace shardrt
