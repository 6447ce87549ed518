// One compilation of an open document, as the editor features read it:
// the compiler's diagnostics, the program as written (for navigation), the
// program after propagation (for hover and inlay hints), and an index of
// every place in the text that names a mesh, axis, function, value or op.
//
// Two runs of the pipeline (tools/shardc/Pipeline.h):
//   1. the checks, keeping the module even when they fail, so that a file
//      with mistakes still has hover and navigation;
//   2. when the checks pass: through propagation (recording each axis's
//      origin) or, in explicit mode, explicit-shardings; with auto-shard,
//      the solver first decides what the program leaves out. Its
//      diagnostics are then the ones reported, exactly what
//      `shardc --verify-only` (with `--explicit` in explicit mode) says, or
//      with auto-shard what `shardc --auto-shard --emit=sharded` says.
// Navigation reads run 1, where every sharding is the one the user wrote;
// run 2's values are found by their location.
#pragma once

#include "ir/IR.h"
#include "passes/auto_shard/AutoShard.h"
#include "passes/propagate/ShardingOrigins.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardc::lsp {

struct AnalysisOptions {
  /// JAX sharding in types (`shardc --explicit`).
  bool explicitMode = false;
  /// Errors reported per document (the CLI's --error-limit default).
  size_t errorLimit = 20;
  /// `shardc --auto-shard`: run 2 lets the solver choose the shardings the
  /// program leaves out (ignored in explicit mode, as by the CLI).
  bool autoShard = false;
  /// The solver's options with autoShard (a shorter time limit than the
  /// CLI's: an editor waits for the answer).
  AutoShardOptions autoShardOptions = [] {
    AutoShardOptions o;
    o.timeLimitSeconds = 5;
    return o;
  }();
};

/// One place in the text that names something.
struct Occurrence {
  enum class Kind { Mesh, Axis, Function, Value, Op };
  Kind kind = Kind::Value;
  Loc loc;
  bool definition = false;
  /// What it names, in the checked module: a Mesh, MeshAxis, Function,
  /// Value or Op. Null for an unresolved name (an unknown axis).
  const void *target = nullptr;
  /// For an axis: the mesh it was looked up in (null when unknown).
  const Mesh *mesh = nullptr;
  /// For an axis written inside a sharding: what the sharding annotates,
  /// e.g. `parameter %x`, `out_sharding of %h`, `result 0 of @main`.
  std::string owner;
};

class Analysis {
public:
  /// Compiles `text`; `path` names it in diagnostics (the CLI's file name).
  Analysis(std::string path, std::string text, const AnalysisOptions &options);

  const SourceFile &file() const { return *file_; }
  /// The diagnostics to publish.
  const std::deque<Diagnostic> &diagnostics() const { return diagnostics_; }
  /// The program as written and checked; null when it did not parse.
  const Module *module() const { return checked_.get(); }
  /// The program after propagation (or explicit-shardings); null when the
  /// checks failed.
  const Module *propagated() const { return propagated_.get(); }
  /// Where each propagated axis came from; null in explicit mode.
  const ShardingOrigins *origins() const {
    return propagated_ && !explicitMode_ ? &origins_ : nullptr;
  }
  bool explicitMode() const { return explicitMode_; }
  /// Whether run 2 ran auto-shard (its shardings are the solver's choice).
  bool autoSharded() const { return autoSharded_; }

  /// The propagated twin of a value or function result of module().
  const Value *propagatedValue(const Value &written) const;
  const ResultSpec *propagatedResult(const ResultSpec &written) const;

  /// The occurrence covering 1-based `line` and byte column `col`, if any.
  const Occurrence *occurrenceAt(int line, int col) const;
  /// Every occurrence naming `target`, in text order.
  std::vector<const Occurrence *> occurrencesOf(const void *target) const;
  /// All occurrences, in text order.
  const std::vector<Occurrence> &occurrences() const { return occurrences_; }

private:
  void index(const Module &module);

  bool explicitMode_;
  bool autoSharded_;
  std::unique_ptr<SourceFile> file_; // every Loc points here: declared first
  std::deque<Diagnostic> diagnostics_;
  std::unique_ptr<Module> checked_;
  ShardingOrigins origins_;
  std::unique_ptr<Module> propagated_;
  std::vector<Occurrence> occurrences_;
  std::map<std::pair<int, int>, const Value *> propagatedValues_;
  std::map<std::pair<int, int>, const ResultSpec *> propagatedResults_;
};

} // namespace shardc::lsp
