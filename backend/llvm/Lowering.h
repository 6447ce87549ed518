// The LLVM backend's shared lowering state (backend/llvm, library
// shardc_llvm). It turns the per-device program that partitioning prints
// (`--emit=spmd`, ../notes SPMD contract: @main = manual_computations over
// all axes of one mesh each, plus global-level `reshard`s between meshes)
// into one LLVM function, the kernel that shardrt_main runs
// (runtime/shardrt.h: `void kernel(ctx, inputs, outputs)`).
//
// Who does what (one file group each; they meet only through this header):
//   Codegen.cpp, Program*.cpp   the module: the shardrt_program constant,
//                               main(), the kernel, block walk, buffers
//                               (arena by liveness), collectives, cross-mesh
//                               reshards, object file, link  [core]
//   Elemental*.cpp, Fusion.cpp  every op computed element by element
//                               (elementwise, convert, select, broadcast,
//                               shape ops, iota, constant, random, reductions)
//                               and the fusion plan                [elemental]
//   Contraction*.cpp            matmul and einsum: cblas_{s,d}gemm for
//                               floats, loops for integers       [contraction]
//   GatherContraction.cpp       a contraction and the all_gather of its
//                               operand, overlapped     [contraction + core]
//
// Conventions every part follows:
//   - A tensor in memory is a row-major buffer of its LOCAL (padded) type as
//     written in the SPMD body; an `i8*` everywhere in the interfaces
//     (LLVM 14 typed pointers), cast at the load or store. i1 is one byte,
//     0 or 1, in memory and `i1` in registers.
//   - Element values in registers: f32 -> float, f64 -> double, i32 -> i32,
//     i64 -> i64, i1 -> i1. Integer arithmetic wraps; integer div/rem by 0
//     gives 0; f32 computes in float (the interpreter's double rounding is
//     within the tests' tolerance); float->int conversion truncates, NaN and
//     out of range give the type's minimum (numpy on x86); max/min propagate
//     NaN; round is half to even; conversion to i1 means "not zero" (NaN ->
//     true); integer pow with a negative exponent is the truncated exact
//     value; integer reduce_mean truncates. No poison or UB may be
//     reachable from any input value: no result, store, branch or index may
//     depend on a poison value (a float max reduction's accumulator, poison
//     after a NaN, reaches only a select that then picks NaN).
//   - Index values (loop variables, linear indices) are i64.
#pragma once

#include "ir/ContractionPlan.h"
#include "ir/ElementalOps.h"
#include "ir/IR.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace shardc::llvmgen {

/// Which values of a block live in memory. Everything else is computed
/// inside the loop of the (single) consumer that reads it: a chain of
/// elementwise, broadcast and shape ops becomes one loop with no
/// temporaries. Decided by planFusion (Fusion.cpp, [elemental]).
struct FusionPlan {
  std::set<const Value *> materialized;
  bool isMaterialized(const Value *v) const { return materialized.count(v) != 0; }

  /// A value a row group computes once per row, before the row's elements.
  struct RowMember {
    const Value *value;
    /// One element per position of the row, kept in a stack buffer (a value
    /// read more than once); otherwise one element per row, kept in a
    /// register (a reduction over the row, or a value computed from them).
    bool wholeRow;
  };
  /// Row groups (RowFusion.cpp), by root: the loop filling a materialized
  /// root walks the rows of its shape (every dim but the last) and, for each
  /// row, computes its members in program order, then the row's elements.
  /// A member is not materialized. This is how softmax or a layer norm reads
  /// its row from memory once: the reductions over the row and the values
  /// read twice stay in cache instead of making round trips through memory.
  std::map<const Value *, std::vector<RowMember>> rowGroups;

  /// An all_gather whose result only one contraction reads, as its operand
  /// `operand`: the contraction's kernel does the exchange itself, block by
  /// block, overlapped with its compute (GatherContraction.cpp). The
  /// all_gather's own step emits nothing; its operand is read at the
  /// contraction's step.
  struct GatheredOperand {
    const Op *gather;
    size_t operand;
  };
  std::map<const Op *, GatheredOperand> gatheredOperands; // by contraction
  std::set<const Op *> deferredGathers;                   // their all_gathers
  bool isDeferredGather(const Op &op) const { return deferredGathers.count(&op) != 0; }
};

/// Materialized: block arguments, results of ops that are not elemental
/// (contractions, collectives, reductions), values returned by the block,
/// values read by a non-elemental op, values with more than one use, and
/// values whose recomputation per element would be costly.
FusionPlan planFusion(const Block &block);

/// Fills plan.gatheredOperands (GatherContraction.cpp): a matmul or einsum
/// whose operand is the result of an all_gather of the same block that
/// nothing else reads, gathered along a dim that is one label of the
/// contraction (any label: summed, or of the result), over 2 or more members.
void planGatherContractions(const Block &block, FusionPlan &plan);

/// Forms the row groups of `plan` (RowFusion.cpp): a materialized value
/// whose fused tree reads reductions over the last dim of values with the
/// same rows takes those reductions, and the values only they and it read,
/// into its loop. `pinned` are the values that must stay in memory whatever
/// their use (block arguments, returned values, operands and results of
/// non-elemental ops, values read inside regions).
void planRowGroups(const Block &block, const std::set<const Value *> &pinned, FusionPlan &plan);

class KernelLowering;

/// Elemental lowering [elemental]: the value of element `index` (one i64 per
/// dim of v's local type) of `v`, emitted at the builder's insertion point.
/// Loads from v's buffer when v is materialized, otherwise recurses through
/// v's defining op.
llvm::Value *emitElement(KernelLowering &k, const Value *v,
                         const std::vector<llvm::Value *> &index);

/// Fills the buffer of materialized elemental value `v` (one loop nest over
/// its local shape, innermost dim contiguous and vectorizable; a flat loop
/// when every leaf is read at the same linear index).
void emitElementalOp(KernelLowering &k, const Value *v);

/// Contraction lowering [contraction]: fills the buffer of the result of a
/// matmul or einsum op (its operands are materialized: planFusion keeps
/// contraction operands in memory).
void emitContraction(KernelLowering &k, const Op &op);

/// A part of a matmul or einsum [contraction]: `plan` over part of its label
/// space, each operand read at `operands[i]` and the result written at
/// `result` (addresses of the part's first element; the plan's strides and
/// resultStrides are those of the whole buffers).
struct ContractionPiece {
  ContractionPlan plan;
  std::vector<llvm::Value *> operands;
  llvm::Value *result = nullptr;
  /// Adds to the values the result holds (BLAS beta = 1) instead of
  /// overwriting them.
  bool accumulate = false;
  /// When set, emitted after every BLAS call, and the calls are cut along K
  /// into pieces of about 2^28 flops (a wait for remote data: MPI moves
  /// messages only inside MPI calls).
  std::function<void()> progress;
};
void emitContractionPiece(KernelLowering &k, const Op &op, const ContractionPiece &piece);
/// `op`'s plan on its operand and result types (CodegenError if they do not fit).
ContractionPlan contractionPlanOf(const Op &op);

/// The state of the kernel function being emitted [core].
class KernelLowering {
public:
  llvm::LLVMContext &context;
  llvm::Module &module;
  llvm::IRBuilder<> &builder;
  const shardc::Module &program;
  llvm::Value *runtimeContext; // the shardrt_context* argument
  /// The target's widest vector register in bytes (64 with AVX-512, 32 with
  /// AVX2, 16 with SSE only): loops that shuffle whole registers (the
  /// transposed tiles) are sized by it, so they do not spill.
  int64_t vectorBytes = 64;

  KernelLowering(llvm::LLVMContext &context, llvm::Module &module, llvm::IRBuilder<> &builder,
                 const shardc::Module &program, llvm::Value *runtimeContext)
      : context(context), module(module), builder(builder), program(program),
        runtimeContext(runtimeContext) {}

  // ---- buffers ------------------------------------------------------------
  /// The buffer (i8*) of a materialized value. [core] allocates it before
  /// the op that defines it is lowered, and reuses its memory once the last
  /// op that reads it has been lowered.
  llvm::Value *buffer(const Value *v) const;
  void setBuffer(const Value *v, llvm::Value *bufferPtr);
  bool hasBuffer(const Value *v) const { return buffers_.count(v) != 0 || bufferSource; }
  /// [core] Where buffer() gets a pointer it has not been given: computes it
  /// in the function being emitted (each op is emitted into a function of its
  /// own, so pointers are made per function).
  std::function<llvm::Value *(const Value *)> bufferSource;
  /// Forgets every buffer pointer (a new function is being emitted).
  void resetBuffers() { buffers_.clear(); }
  /// [core] This device's index (i64) among the members of its group over
  /// `axes` of the current mesh, as shardrt_all_slice numbers them; computed
  /// at the start of the function being emitted, outside any loop.
  std::function<llvm::Value *(const std::vector<AxisRef> &axes)> groupIndex;
  /// [core] A constant of the program description (a group, an axis, an
  /// array of the driver module) as an i8* in the function being emitted:
  /// kernels are modules of their own, so it comes in through the kernel's
  /// arguments (and two kernels that differ only in such pointers are one).
  std::function<llvm::Value *(llvm::Constant *)> externalPointer;
  /// [core] `op`'s profile id as an i64 in the function being emitted (an
  /// argument of the kernel, for the same reason).
  std::function<llvm::Value *(const Op &)> opIdValue;
  /// [core] An i64 the function being emitted takes through the kernel's
  /// arguments rather than as a constant (when unset, the constant): for
  /// the sizes a library call is given (a GEMM's M, N, K and leading
  /// dimensions), which change nothing in the kernel's code, so that
  /// kernels differing only in them are one.
  std::function<llvm::Value *(int64_t)> externalInt;
  llvm::Value *sizeArgument(int64_t value) { return externalInt ? externalInt(value) : i64(value); }
  /// Scratch memory for one op's lowering (e.g. a transposed copy for gemm),
  /// valid until the op is done: [core] frees it after the op.
  llvm::Value *scratch(int64_t bytes);
  /// Frees every scratch buffer handed out since the last call [core].
  void freeScratch();
  const FusionPlan &fusion() const { return *fusion_; }
  void setFusion(const FusionPlan *plan) { fusion_ = plan; }

  // ---- types and addresses -----------------------------------------------
  llvm::Type *elementType(DType t); // register type (i1 for I1)
  llvm::Type *memoryType(DType t);  // in-memory type (i8 for I1)
  llvm::Value *i64(int64_t c);      // an i64 constant
  /// Address of element `linear` (i64) of a buffer of dtype `t`, typed as a
  /// pointer to memoryType(t).
  llvm::Value *elementAddress(llvm::Value *buffer, DType t, llvm::Value *linear);
  llvm::Value *load(llvm::Value *buffer, DType t, llvm::Value *linear); // -> register type
  void store(llvm::Value *buffer, DType t, llvm::Value *linear, llvm::Value *element);
  /// Row-major linear index of `index` in `shape` (constants fold).
  llvm::Value *linearIndex(const std::vector<int64_t> &shape,
                           const std::vector<llvm::Value *> &index);

  // ---- loops --------------------------------------------------------------
  /// for i in [0, count): body(i). Leaves the builder after the loop. The loop
  /// carries no metadata that blocks vectorization. A `versionable` loop may
  /// be emitted twice (see fastPathIf), so its body must build every value
  /// it uses inside the loop on each call rather than reuse one it built.
  void emitLoop(llvm::Value *count, const std::function<void(llvm::Value *)> &body,
                bool versionable = false);
  /// Nested loops over `shape` (outermost dim first); rank 0 runs body once.
  /// `versionable` applies to the innermost loop.
  void emitLoopNest(const std::vector<int64_t> &shape,
                    const std::function<void(const std::vector<llvm::Value *> &)> &body,
                    bool versionable = false);
  /// For an element computation that has a cheaper form, exact whenever a
  /// condition on loop-invariant values holds (the row sum's reciprocal is a
  /// normal float): true when the cheaper form is to be emitted. In the body
  /// of a versionable innermost loop, `makeCondition` builds the i1 before the
  /// loop (with the builder it is given); a constant answers at once, else
  /// the loop is emitted a second time, in which every such call returns
  /// true, and entered instead of the first copy when all its conditions
  /// hold. Elsewhere false.
  bool fastPathIf(const std::function<llvm::Value *(llvm::IRBuilder<> &)> &makeCondition);
  /// True when `v` is computed before the innermost loop emitLoop has open
  /// (a constant, an argument, an instruction in a block placed before that
  /// loop's header), so it is the same on every iteration; also true outside
  /// loops. False when not known.
  bool isLoopInvariant(const llvm::Value *v) const;

  // ---- calls --------------------------------------------------------------
  /// A function of libshardrt, libm, libmvec or cblas, declared on first use.
  llvm::FunctionCallee runtimeFunction(const std::string &name, llvm::FunctionType *type);
  /// The index of `mesh` in the program description (shardrt_program.meshes)
  /// and of the enclosing manual_computation's mesh while lowering its body.
  int64_t meshIndex(const Mesh *mesh) const;
  const Mesh *currentMesh() const { return currentMesh_; }
  void setCurrentMesh(const Mesh *mesh) { currentMesh_ = mesh; }
  /// The profile op id of `op` (an index into shardrt_program.op_names).
  int64_t opId(const Op &op) const;

  // Filled by [core] while it builds the program description.
  std::map<const Mesh *, int64_t> meshIndices;
  std::map<const Op *, int64_t> opIds;

private:
  mutable std::map<const Value *, llvm::Value *> buffers_;
  std::vector<llvm::BasicBlock *> openLoops_; // headers of emitLoop's open loops
  // What fastPathIf asked of one open loop (a stack parallel to openLoops_).
  struct LoopVersions {
    llvm::BasicBlock *entry = nullptr; // before the loop: the conditions, then the choice
    bool versionable = false;
    bool emittingFast = false;
    std::vector<bool> answers; // per fastPathIf call of the first copy, for the second
    size_t nextAnswer = 0;
    std::vector<llvm::Value *> conditions;
  };
  std::vector<LoopVersions> loopVersions_;
  /// One copy of a loop entered from `entry`; returns its header.
  llvm::BasicBlock *emitLoopCopy(llvm::Value *count, const std::function<void(llvm::Value *)> &body,
                                 llvm::BasicBlock *entry, llvm::BasicBlock *exit);
  std::vector<llvm::Value *> scratch_;
  const FusionPlan *fusion_ = nullptr;
  const Mesh *currentMesh_ = nullptr;
};

} // namespace shardc::llvmgen
