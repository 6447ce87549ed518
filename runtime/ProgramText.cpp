// Seed syntax (LANGUAGE.md sections 2 and 3) for the program description.
#include "runtime/ProgramText.h"

#include "runtime/Context.h"
#include "support/Npy.h"

namespace shardrt {

std::string meshText(const shardrt_mesh &mesh) {
  std::string text = "<[";
  for (int64_t a = 0; a < mesh.num_axes; ++a)
    text += format("%s\"%s\"=%lld", a ? ", " : "", mesh.axis_names[a],
                   static_cast<long long>(mesh.axis_sizes[a]));
  text += "]";
  bool identity = true;
  int64_t devices = meshDevices(mesh);
  for (int64_t p = 0; mesh.device_ids && p < devices; ++p)
    identity = identity && mesh.device_ids[p] == p;
  if (mesh.device_ids && (!identity || mesh.num_axes == 0)) {
    text += ", device_ids=[";
    for (int64_t p = 0; p < devices; ++p)
      text += format("%s%lld", p ? ", " : "", static_cast<long long>(mesh.device_ids[p]));
    text += "]";
  }
  return text + ">";
}

std::string typeText(const shardrt_tensor &tensor) {
  std::string text = "tensor<";
  for (int64_t d = 0; d < tensor.ndims; ++d)
    text += format("%lldx", static_cast<long long>(tensor.shape[d]));
  return text + dtypeName(tensor.dtype) + ">";
}

std::string shardingText(const shardrt_program &program, const shardrt_tensor &tensor) {
  const shardrt_mesh &mesh = program.meshes[tensor.mesh];
  if (!*mesh.name) // a value of a program without meshes: no sharding to show
    return "";
  std::string text = format(" sharding<@%s, [", mesh.name);
  const shardrt_axis_ref *axis = tensor.dim_axes;
  for (int64_t d = 0; d < tensor.ndims; ++d) {
    text += d ? ", {" : "{";
    for (int64_t i = 0; i < tensor.dim_num_axes[d]; ++i, ++axis) {
      text += format("%s\"%s\"", i ? ", " : "", mesh.axis_names[axis->axis]);
      if (axis->pre_size != 1 || axis->size != mesh.axis_sizes[axis->axis])
        text += format(":(%lld)%lld", static_cast<long long>(axis->pre_size),
                       static_cast<long long>(axis->size));
    }
    text += "}";
  }
  return text + "]>";
}

std::string shapeText(const int64_t *shape, int64_t ndims) {
  return shardc::support::npyShapeText(shape, static_cast<size_t>(ndims));
}

} // namespace shardrt
