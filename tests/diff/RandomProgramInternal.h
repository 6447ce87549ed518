// The random program generator's state, shared by its three files:
// RandomProgram.cpp (meshes, shardings, the value pool, the program text),
// RandomOps.cpp (one emit function per op group) and RandomRegions.cpp (ops
// with a body: manual_computation and the collectives of its body).
#pragma once

#include "tests/diff/RandomProgram.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace shardc::difftest {

/// splitmix64: tiny, fast and the same everywhere (std distributions are not).
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return n <= 1 ? 0 : static_cast<int64_t>(next() % n); }
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(double p) { return (next() >> 11) * 0x1.0p-53 < p; }
  template <class T> const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }

private:
  uint64_t state_;
};

using Shape = std::vector<int64_t>;

/// A mesh: named axes over device ids (empty ids: 0..N-1). A maximal mesh
/// has no axes and one device id; the empty mesh has neither.
struct MeshSpec {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<int64_t> ids;
  bool hasSplitAxis() const;
};

/// A value in scope: its SSA name, type, whether it is "exact" (computed
/// without reductions or contractions, so discontinuous ops may read it),
/// the mesh it was last pinned on, and, inside a manual body, the manual axes
/// along which it differs from device to device.
struct Val {
  std::string name;
  Shape shape;
  std::string dtype; // f32 f64 i32 i64 i1
  bool exact = true;
  int mesh = 0;
  std::set<std::string> varies;
};

/// One region being written: @main, or a manual_computation body.
struct Scope {
  std::vector<Val> pool;
  std::string body;
  std::string indent = "  ";
  /// The manual_computation's mesh, -1 in @main.
  int mesh = -1;
  /// Every axis manual here (this region's and the enclosing ones').
  std::set<std::string> manual;
  /// This region's own manual axes, in mesh order.
  std::vector<std::string> ownAxes;
  int depth = 0;
};

bool isFloat(const std::string &dtype);
bool isInt(const std::string &dtype);
std::string typeText(const Shape &shape, const std::string &dtype);
std::string listText(const std::vector<int64_t> &v);
int64_t product(const Shape &s);

class Generator {
public:
  Generator(uint64_t seed, const ProgramOptions &options) : rng_(seed), options_(options) {}
  std::string run();

private:
  Rng rng_;
  ProgramOptions options_;
  int64_t devices_ = 1;
  std::vector<MeshSpec> meshes_;
  std::vector<std::string> params_;
  std::vector<Scope> scopes_;
  int ops_ = 0;
  int names_ = 0;

  Scope &cur() { return scopes_.back(); }
  bool inBody() { return scopes_.size() > 1; }

  // RandomProgram.cpp: meshes, shardings, the pool, the program text.
  void makeMeshes();
  std::string meshText(const MeshSpec &mesh);
  std::string sharding(const Shape &shape, int meshIndex, bool closed, bool priorities = false,
                       const std::set<std::string> &exclude = {});
  Shape randomShape(int minRank = 1, int maxRank = 3);
  std::string randomDtype();
  std::string fresh(const char *prefix);
  Val newParam(const Shape &shape, const std::string &dtype);
  Val newOperand(const Shape &shape, const std::string &dtype);
  Val anyValue(const std::function<bool(const Val &)> &want = nullptr, bool allowBool = false);
  Val emit(const std::string &rhs, Val result, bool writeType = false);
  std::string assemble();

  // RandomOps.cpp: one function per op group; step() draws one of them.
  void step();
  void emitUnary(const Val &x);
  void emitPositive(const Val &x);
  void emitBinary(const Val &a);
  void emitLogical();
  void emitSelect();
  void emitContraction();
  void emitReduction(const Val &x);
  void emitTranspose();
  void emitReshape();
  void emitBroadcast(const Val &x);
  void emitConcatSliceOrPad();
  void emitCreation(Shape shape = {}, std::string dtype = "");
  void emitConvert(const Val &x);
  void emitShardingOp(const Val &x);
  Shape broadcastable(const Shape &a);

  // RandomRegions.cpp: ops with a body. A new region kind (for, while, if)
  // is one more emit function here, one more entry in step()'s table, and
  // a Scope pushed for each of its regions.
  void emitManual();
  void emitCollective();
  std::vector<std::string> permutePairs(const std::string &axis, bool dropSome);
};

} // namespace shardc::difftest
