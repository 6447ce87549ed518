// The random program generator's state, shared by its files:
// RandomProgram.cpp (meshes, shardings, the value pool, the program text),
// RandomOps.cpp (one emit function per op group), RandomRegions.cpp
// (manual_computation and the collectives of its body), RandomControl.cpp
// (for, while, if), RandomCalls.cpp (calls of generated functions) and
// RandomAxes.cpp (axis types, auto_axes and explicit_axes).
#pragma once

#include "tests/diff/RandomProgram.h"

#include <functional>
#include <optional>
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
/// A value's explicit axes per dim, major to minor: the part of its sharding
/// that is its type on a mesh with explicit axes (LANGUAGE.md section 10).
/// Empty (or every dim empty): replicated along every explicit axis.
using Ex = std::vector<std::vector<std::string>>;

/// A mesh: named axes over device ids (empty ids: 0..N-1). A maximal mesh
/// has no axes and one device id; the empty mesh has neither.
struct MeshSpec {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<int64_t> ids;
  /// The axes written `explicit` in axis_types.
  std::set<std::string> explicitAxes;
  /// axis_types is written (all auto too: then explicit_axes makes some
  /// explicit).
  bool typed = false;
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
  /// Its explicit axes (in a program with axis types; else empty).
  Ex ex;
};

/// "%a, %b": the values' names as operands or results are written.
std::string names(const std::vector<Val> &values);

/// One region being written: a function's body, a manual_computation body,
/// or a region of for, while or if (whose pool starts as a copy of the
/// enclosing one's: regions capture what is in scope).
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
  /// Shardings may be written here (out_shardings, sharding_constraint,
  /// reshard, sharded callees): not inside manual bodies.
  bool annotate = true;
  /// A missing operand may become a new parameter of @main (else a creation
  /// op): @main and its control-flow regions outside manual bodies.
  bool params = true;
  /// Collectives and manual_computations may be written here: not in a
  /// region whose predicate may differ from device to device.
  bool collectives = true;
  /// Every value here is on the home mesh: control flow runs inside one
  /// per-device body, so its regions may not move values between meshes
  /// (for, while and if are written only where this holds).
  bool oneMesh = false;
  /// The axes explicit here: the mesh's, less the manual ones and those an
  /// enclosing auto_axes made auto, plus those an explicit_axes made explicit.
  std::set<std::string> explicitAxes;
};

/// A generated function other than @main: its name, parameters and results
/// (as seen from its body), and whether its signature or body writes
/// shardings (then it is called only outside manual bodies).
struct FuncSpec {
  std::string name;
  std::vector<Val> params;
  std::vector<Val> results;
  bool annotated = false;
  bool oneMesh = false;
};

bool isFloat(const std::string &dtype);
bool isInt(const std::string &dtype);
std::string typeText(const Shape &shape, const std::string &dtype);
/// Equal explicit parts (an empty one is replicated).
bool sameExplicitPart(const Ex &a, const Ex &b);
std::string listText(const std::vector<int64_t> &v);
int64_t product(const Shape &s);

class Generator {
public:
  Generator(uint64_t seed, const ProgramOptions &options)
      : rng_(seed), axesRng_(seed ^ 0xA5E5A5E5ull), options_(options) {}
  std::string run();

private:
  Rng rng_;
  /// Draws whether a program has axis types, from its own stream, so that
  /// the programs without them are those of the seeds before axis types.
  Rng axesRng_;
  ProgramOptions options_;
  /// The first mesh has axis types (then it is the program's only mesh).
  bool mixed_ = false;
  /// The explicit part of the next emitted result, when its op decides it
  /// (reshard, sharding_constraint).
  std::optional<Ex> nextEx_;
  int64_t devices_ = 1;
  std::vector<MeshSpec> meshes_;
  std::vector<std::string> params_;
  std::vector<Scope> scopes_;
  int ops_ = 0;
  int names_ = 0;
  std::vector<FuncSpec> funcs_;
  std::vector<std::string> funcTexts_;
  int callDepth_ = 0;

  Scope &cur() { return scopes_.back(); }
  /// The mesh of the current scope's values: a manual body's, else the first.
  int home() { return cur().mesh >= 0 ? cur().mesh : 0; }
  /// Whether `v` may be used here (see Scope::oneMesh).
  bool usable(const Val &v) { return !cur().oneMesh || v.mesh == home(); }

  // RandomProgram.cpp: meshes, shardings, the pool, the program text.
  void makeMeshes();
  std::string meshText(const MeshSpec &mesh);
  std::string sharding(const Shape &shape, int meshIndex, bool closed, bool priorities = false,
                       const std::set<std::string> &exclude = {}, const Ex *ex = nullptr);
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

  // RandomRegions.cpp: manual_computation and its collectives.
  void emitManual();
  void emitCollective();
  std::vector<std::string> permutePairs(const std::string &axis, bool dropSome);

  // RandomControl.cpp: for, while and if; RandomCalls.cpp: call.
  void emitFor();
  void emitWhile();
  void emitIf();
  void emitCall();
  Scope regionScope(const std::vector<Val> &args);
  void fill(int maxOps);
  Val scalar(const std::string &dtype, const std::string &text);
  Val predicate();
  Val pickReturn(const Val &want, bool exact, const std::set<std::string> *within, bool bound);
  void useIndex(const Val &index);
  void useCarried(const std::vector<Val> &values);
  std::string resultTypes(const std::vector<Val> &results);
  const FuncSpec &makeFunction(const std::vector<Val> &args);

  // RandomAxes.cpp: axis types, the explicit part of each value, and the
  // auto_axes / explicit_axes regions.
  void chooseAxisTypes();
  Ex randomEx(const Shape &shape, const std::vector<std::string> &axes);
  std::vector<std::string> explicitHere() const;
  std::optional<Ex> inferEx(const std::string &rhs, const Val &result);
  std::string exText(const Ex &ex, size_t rank) const;
  void emitAxesRegion(bool autoAxes);
};

} // namespace shardc::difftest
