// The constant data a generated executable hands the runtime: the
// shardrt_program of runtime/shardrt.h (meshes, inputs, outputs, collective
// groups, op names), built as LLVM constants with the C layout (every field
// an i64 or a pointer, so the LLVM structs need no padding rules).
#pragma once

#include "ir/IR.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Module.h>

#include <map>
#include <string>
#include <vector>

namespace shardc::llvmgen {

class ProgramDescription {
public:
  ProgramDescription(llvm::Module &module, const shardc::Module &program);

  /// The index of `mesh` in shardrt_program.meshes (every mesh of the
  /// module, in declaration order).
  int64_t meshIndex(const Mesh &mesh) const;
  const Mesh &meshOf(const Sharding &sharding) const;

  /// A shardrt_tensor constant for a global type and sharding; `name` null
  /// for results and temporaries; `sharding` null for a value of a program
  /// without meshes (every device holds all of it: the runtime's empty
  /// mesh, added to the description for it). Returns a `shardrt_tensor*`.
  llvm::Constant *tensor(const char *name, const TensorType &type, const Sharding *sharding);
  /// The shardrt_group of `axes` on `mesh` (made once per distinct group and
  /// listed in the program, so its communicator is made at start-up).
  llvm::Constant *group(const Mesh &mesh, const std::vector<AxisRef> &axes);
  /// One shardrt_axis_ref constant (for shardrt_axis_index).
  llvm::Constant *axisRef(const Mesh &mesh, const AxisRef &axis);
  /// A constant i64 array; returns an `i64*`.
  llvm::Constant *int64Array(const std::vector<int64_t> &values, const std::string &name);
  /// Registers a profile label; returns its op id.
  int64_t addOpName(const std::string &label);

  /// Emits the shardrt_program global (call once, after every tensor,
  /// group and op name is known). `inputs`/`outputs` are shardrt_tensor
  /// constants from tensor(); `releaseScratch`: collectives free their
  /// scratch when they return (shardrt_program.release_scratch).
  llvm::GlobalVariable *finish(const std::string &programName, int64_t numDevices,
                               const std::vector<llvm::Constant *> &inputs,
                               const std::vector<llvm::Constant *> &outputs, bool releaseScratch);

  llvm::StructType *tensorType() const { return tensor_; }
  llvm::StructType *groupType() const { return group_; }
  llvm::StructType *axisRefType() const { return axisRef_; }
  llvm::StructType *programType() const { return program_; }

private:
  llvm::Module &module_;
  const shardc::Module &program_ir_;
  llvm::LLVMContext &context_;
  llvm::IntegerType *i64_;
  llvm::PointerType *i8p_;
  llvm::StructType *axisRef_, *mesh_, *tensor_, *group_, *program_;
  std::map<const Mesh *, int64_t> meshIndex_;
  std::map<std::string, llvm::Constant *> groups_; // key: mesh index + axes text
  std::vector<llvm::Constant *> groupValues_;      // shardrt_group values, in order
  std::vector<std::string> opNames_;
  bool needsEveryDeviceMesh_ = false; // a synthetic empty mesh after the module's
  int counter_ = 0;

  llvm::Constant *string(const std::string &text);
  llvm::Constant *axisRefValue(const Mesh &mesh, const AxisRef &axis);
  /// A constant global array; returns a pointer to its first element (a
  /// null pointer of that type when `values` is empty).
  llvm::Constant *array(llvm::Type *element, const std::vector<llvm::Constant *> &values,
                        const std::string &name);
  std::string uniqueName(const std::string &base) {
    return base + "." + std::to_string(counter_++);
  }
};

} // namespace shardc::llvmgen
