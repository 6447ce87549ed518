// The shardrt_program constant (runtime/shardrt.h), field by field.
#include "backend/llvm/ProgramDescription.h"

#include "backend/llvm/Codegen.h"

#include <llvm/IR/GlobalVariable.h>

namespace shardc::llvmgen {

ProgramDescription::ProgramDescription(llvm::Module &module, const shardc::Module &program)
    : module_(module), program_ir_(program), context_(module.getContext()) {
  i64_ = llvm::Type::getInt64Ty(context_);
  i8p_ = llvm::Type::getInt8PtrTy(context_);
  auto *i64p = i64_->getPointerTo();
  auto *i8pp = i8p_->getPointerTo();
  // The structs of shardrt.h, field for field.
  axisRef_ = llvm::StructType::create(context_, {i64_, i64_, i64_}, "shardrt_axis_ref");
  mesh_ = llvm::StructType::create(context_, {i8p_, i64_, i8pp, i64p, i64p}, "shardrt_mesh");
  tensor_ = llvm::StructType::create(
      context_, {i8p_, i64_, i64_, i64p, i64_, i64p, axisRef_->getPointerTo()}, "shardrt_tensor");
  group_ =
      llvm::StructType::create(context_, {i64_, i64_, axisRef_->getPointerTo()}, "shardrt_group");
  program_ = llvm::StructType::create(context_,
                                      {i8p_, i64_, i64_, mesh_->getPointerTo(), i64_,
                                       tensor_->getPointerTo(), i64_, tensor_->getPointerTo(), i64_,
                                       group_->getPointerTo(), i64_, i8pp, i64_},
                                      "shardrt_program");
  for (size_t i = 0; i < program.meshes.size(); ++i)
    meshIndex_[program.meshes[i].get()] = static_cast<int64_t>(i);
}

int64_t ProgramDescription::meshIndex(const Mesh &mesh) const {
  auto it = meshIndex_.find(&mesh);
  if (it == meshIndex_.end())
    throw std::logic_error("llvm backend: mesh @" + mesh.name + " is not the module's");
  return it->second;
}

const Mesh &ProgramDescription::meshOf(const Sharding &sharding) const {
  const Mesh *mesh = program_ir_.findMesh(sharding.meshName);
  if (!mesh)
    throw CodegenError(sharding.loc, "unknown mesh @" + sharding.meshName);
  return *mesh;
}

llvm::Constant *ProgramDescription::string(const std::string &text) {
  llvm::Constant *data = llvm::ConstantDataArray::getString(context_, text);
  auto *global = new llvm::GlobalVariable(module_, data->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, data, ".str");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return llvm::ConstantExpr::getPointerCast(global, i8p_);
}

llvm::Constant *ProgramDescription::array(llvm::Type *element,
                                          const std::vector<llvm::Constant *> &values,
                                          const std::string &name) {
  if (values.empty())
    return llvm::ConstantPointerNull::get(element->getPointerTo());
  auto *type = llvm::ArrayType::get(element, values.size());
  auto *global = new llvm::GlobalVariable(module_, type, true, llvm::GlobalValue::PrivateLinkage,
                                          llvm::ConstantArray::get(type, values), uniqueName(name));
  llvm::Constant *zero = llvm::ConstantInt::get(i64_, 0);
  return llvm::ConstantExpr::getInBoundsGetElementPtr(type, global,
                                                      llvm::ArrayRef<llvm::Constant *>{zero, zero});
}

llvm::Constant *ProgramDescription::int64Array(const std::vector<int64_t> &values,
                                               const std::string &name) {
  std::vector<llvm::Constant *> constants;
  for (int64_t v : values)
    constants.push_back(llvm::ConstantInt::get(i64_, v));
  return array(i64_, constants, name);
}

llvm::Constant *ProgramDescription::axisRefValue(const Mesh &mesh, const AxisRef &axis) {
  int index = mesh.axisIndex(axis.name);
  if (index < 0)
    throw CodegenError(axis.loc, "unknown axis \"" + axis.name + "\" of mesh @" + mesh.name);
  int64_t size = axis.effectiveSize(mesh.axes[static_cast<size_t>(index)].size);
  return llvm::ConstantStruct::get(axisRef_, {llvm::ConstantInt::get(i64_, index),
                                              llvm::ConstantInt::get(i64_, axis.effectivePreSize()),
                                              llvm::ConstantInt::get(i64_, size)});
}

llvm::Constant *ProgramDescription::axisRef(const Mesh &mesh, const AxisRef &axis) {
  return array(axisRef_, {axisRefValue(mesh, axis)}, "axis");
}

llvm::Constant *ProgramDescription::tensor(const char *name, const TensorType &type,
                                           const Sharding *sharding) {
  int64_t meshIdx = static_cast<int64_t>(program_ir_.meshes.size());
  std::vector<int64_t> dimNumAxes;
  std::vector<llvm::Constant *> dimAxes;
  if (sharding)
    meshIdx = meshIndex(meshOf(*sharding));
  else
    needsEveryDeviceMesh_ = true;
  for (size_t d = 0; d < type.rank(); ++d) {
    const std::vector<AxisRef> none;
    const std::vector<AxisRef> &axes =
        sharding && d < sharding->dims.size() ? sharding->dims[d].axes : none;
    dimNumAxes.push_back(static_cast<int64_t>(axes.size()));
    for (const AxisRef &axis : axes)
      dimAxes.push_back(axisRefValue(meshOf(*sharding), axis));
  }
  llvm::Constant *value = llvm::ConstantStruct::get(
      tensor_, {name ? string(name) : llvm::ConstantPointerNull::get(i8p_),
                llvm::ConstantInt::get(i64_, static_cast<int64_t>(type.dtype)),
                llvm::ConstantInt::get(i64_, static_cast<int64_t>(type.rank())),
                int64Array(type.shape, "shape"), llvm::ConstantInt::get(i64_, meshIdx),
                int64Array(dimNumAxes, "dim_num_axes"), array(axisRef_, dimAxes, "dim_axes")});
  return array(tensor_, {value}, "tensor");
}

llvm::Constant *ProgramDescription::group(const Mesh &mesh, const std::vector<AxisRef> &axes) {
  std::string key = std::to_string(meshIndex(mesh));
  std::vector<llvm::Constant *> refs;
  for (const AxisRef &axis : axes) {
    key += "," + axis.str();
    refs.push_back(axisRefValue(mesh, axis));
  }
  auto found = groups_.find(key);
  if (found != groups_.end())
    return found->second;
  llvm::Constant *value = llvm::ConstantStruct::get(
      group_, {llvm::ConstantInt::get(i64_, meshIndex(mesh)),
               llvm::ConstantInt::get(i64_, static_cast<int64_t>(axes.size())),
               array(axisRef_, refs, "group_axes")});
  groupValues_.push_back(value);
  return groups_[key] = array(group_, {value}, "group");
}

int64_t ProgramDescription::addOpName(const std::string &label) {
  opNames_.push_back(label);
  return static_cast<int64_t>(opNames_.size()) - 1;
}

llvm::GlobalVariable *ProgramDescription::finish(const std::string &programName, int64_t numDevices,
                                                 const std::vector<llvm::Constant *> &inputs,
                                                 const std::vector<llvm::Constant *> &outputs,
                                                 bool releaseScratch) {
  auto load = [](llvm::Constant *pointerToOne) {
    // tensor() returns a pointer into a one-element array: its initializer.
    auto *gep = llvm::cast<llvm::ConstantExpr>(pointerToOne);
    auto *global = llvm::cast<llvm::GlobalVariable>(gep->getOperand(0));
    return global->getInitializer()->getAggregateElement(0u);
  };
  std::vector<llvm::Constant *> meshes;
  for (const auto &mesh : program_ir_.meshes) {
    std::vector<llvm::Constant *> axisNames;
    std::vector<int64_t> axisSizes;
    for (const MeshAxis &axis : mesh->axes) {
      axisNames.push_back(string(axis.name));
      axisSizes.push_back(axis.size);
    }
    llvm::Constant *deviceIds = mesh->deviceIds.empty()
                                    ? llvm::ConstantPointerNull::get(i64_->getPointerTo())
                                    : int64Array(mesh->deviceIds, "device_ids");
    meshes.push_back(llvm::ConstantStruct::get(
        mesh_,
        {string(mesh->name), llvm::ConstantInt::get(i64_, static_cast<int64_t>(mesh->axes.size())),
         array(i8p_, axisNames, "axis_names"), int64Array(axisSizes, "axis_sizes"), deviceIds}));
  }
  // No axes, no device ids: every device holds everything. Unnamed, so the
  // runtime shows such values without a sharding.
  if (needsEveryDeviceMesh_)
    meshes.push_back(
        llvm::ConstantStruct::get(mesh_, {string(""), llvm::ConstantInt::get(i64_, 0),
                                          llvm::ConstantPointerNull::get(i8p_->getPointerTo()),
                                          llvm::ConstantPointerNull::get(i64_->getPointerTo()),
                                          llvm::ConstantPointerNull::get(i64_->getPointerTo())}));
  std::vector<llvm::Constant *> inputValues, outputValues, opNames;
  for (llvm::Constant *t : inputs)
    inputValues.push_back(load(t));
  for (llvm::Constant *t : outputs)
    outputValues.push_back(load(t));
  for (const std::string &name : opNames_)
    opNames.push_back(string(name));
  auto count = [&](size_t n) { return llvm::ConstantInt::get(i64_, static_cast<int64_t>(n)); };
  llvm::Constant *value = llvm::ConstantStruct::get(
      program_,
      {string(programName), llvm::ConstantInt::get(i64_, numDevices), count(meshes.size()),
       array(mesh_, meshes, "meshes"), count(inputValues.size()),
       array(tensor_, inputValues, "inputs"), count(outputValues.size()),
       array(tensor_, outputValues, "outputs"), count(groupValues_.size()),
       array(group_, groupValues_, "groups"), count(opNames.size()),
       array(i8p_, opNames, "op_names"), llvm::ConstantInt::get(i64_, releaseScratch ? 1 : 0)});
  return new llvm::GlobalVariable(module_, program_, true, llvm::GlobalValue::PrivateLinkage, value,
                                  "shardc.program");
}

} // namespace shardc::llvmgen
