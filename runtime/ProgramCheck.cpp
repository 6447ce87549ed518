// Checks the program description the generated code passes at start-up.
// Everything here is the compiler's responsibility, so a problem is an
// internal error (exit 3): it is never the user's input that is wrong.
#include "runtime/Context.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace shardrt {

std::string axisRefsProblem(const shardrt_program &program, int64_t meshIndex,
                            const shardrt_axis_ref *axes, int64_t count) {
  const shardrt_mesh &mesh = program.meshes[meshIndex];
  for (int64_t i = 0; i < count; ++i) {
    const shardrt_axis_ref &a = axes[i];
    if (a.axis < 0 || a.axis >= mesh.num_axes)
      return format("axis index %lld out of range: mesh @%s has %lld axes",
                    static_cast<long long>(a.axis), mesh.name,
                    static_cast<long long>(mesh.num_axes));
    int64_t n = mesh.axis_sizes[a.axis];
    if (a.pre_size < 1 || a.size < 1 || n % (a.pre_size * a.size) != 0)
      return format("sub-axis \"%s\":(%lld)%lld doesn't divide the axis size %lld",
                    mesh.axis_names[a.axis], static_cast<long long>(a.pre_size),
                    static_cast<long long>(a.size), static_cast<long long>(n));
    // A piece covers the multiplicative interval [pre, pre * size) of its
    // axis; two pieces of one axis overlap when their intervals intersect.
    for (int64_t j = 0; j < i; ++j) {
      const shardrt_axis_ref &b = axes[j];
      if (b.axis == a.axis &&
          std::max(a.pre_size, b.pre_size) < std::min(a.pre_size * a.size, b.pre_size * b.size))
        return format("axis \"%s\" used twice (overlapping pieces)", mesh.axis_names[a.axis]);
    }
  }
  return "";
}

namespace {

std::string meshProblem(const shardrt_program &program, const shardrt_mesh &mesh) {
  if (!mesh.name || mesh.num_axes < 0 || (mesh.num_axes > 0 && !mesh.axis_sizes))
    return "malformed";
  for (int64_t a = 0; a < mesh.num_axes; ++a) {
    if (!mesh.axis_names || !mesh.axis_names[a] || mesh.axis_sizes[a] < 1)
      return format("axis %lld has no name or a size below 1", static_cast<long long>(a));
  }
  if (mesh.num_axes == 0 && !mesh.device_ids)
    return ""; // the empty mesh: every device
  int64_t devices = meshDevices(mesh);
  if (mesh.num_axes > 0 && devices != program.num_devices)
    return format("has %lld devices, the program %lld", static_cast<long long>(devices),
                  static_cast<long long>(program.num_devices));
  std::set<int64_t> seen;
  for (int64_t p = 0; p < devices; ++p) {
    int64_t id = meshDeviceAt(mesh, p);
    if (id < 0 || id >= program.num_devices || !seen.insert(id).second)
      return format("device id %lld is out of range or repeated", static_cast<long long>(id));
  }
  return "";
}

std::string tensorProblem(const shardrt_program &program, const shardrt_tensor &t) {
  if (t.dtype < SHARDRT_F32 || t.dtype > SHARDRT_I1)
    return format("unknown dtype code %lld", static_cast<long long>(t.dtype));
  if (t.ndims < 0 || (t.ndims > 0 && (!t.shape || !t.dim_num_axes)))
    return "malformed shape";
  if (t.mesh < 0 || t.mesh >= program.num_meshes)
    return format("mesh index %lld out of range", static_cast<long long>(t.mesh));
  int64_t total = 0;
  for (int64_t d = 0; d < t.ndims; ++d) {
    if (t.shape[d] < 0 || t.dim_num_axes[d] < 0)
      return format("dim %lld has a negative size or axis count", static_cast<long long>(d));
    total += t.dim_num_axes[d];
  }
  return axisRefsProblem(program, t.mesh, t.dim_axes, total);
}

} // namespace

void validateProgram(shardrt_context *ctx) {
  const shardrt_program &program = *ctx->program;
  if (program.num_devices < 1 || program.num_meshes < 0 || program.num_inputs < 0 ||
      program.num_outputs < 0 || program.num_groups < 0 || program.num_ops < 0)
    internalError(ctx, "program description - negative counts or no devices");
  for (int64_t m = 0; m < program.num_meshes; ++m) {
    std::string problem = meshProblem(program, program.meshes[m]);
    if (!problem.empty())
      internalError(ctx, format("program description - mesh %lld: %s", static_cast<long long>(m),
                                problem.c_str()));
  }
  std::set<std::string> names;
  for (int64_t i = 0; i < program.num_inputs; ++i) {
    const shardrt_tensor &t = program.inputs[i];
    std::string problem = tensorProblem(program, t);
    if (problem.empty() && (!t.name || !*t.name || !names.insert(t.name).second))
      problem = "missing or repeated name";
    if (!problem.empty())
      internalError(ctx, format("program description - input %lld: %s", static_cast<long long>(i),
                                problem.c_str()));
  }
  for (int64_t i = 0; i < program.num_outputs; ++i) {
    std::string problem = tensorProblem(program, program.outputs[i]);
    if (!problem.empty())
      internalError(ctx, format("program description - output %lld: %s", static_cast<long long>(i),
                                problem.c_str()));
  }
  for (int64_t i = 0; i < program.num_ops; ++i)
    if (!program.op_names || !program.op_names[i])
      internalError(ctx,
                    format("program description - op %lld has no name", static_cast<long long>(i)));
}

} // namespace shardrt
