// Helpers for the runtime tests: program descriptions built in C++ (the
// generated code emits the same structs as constants), the contract's group
// membership computed by brute force, and a check counter that reports per
// rank and agrees on the verdict.
#pragma once

#include "runtime/shardrt.h"

#include <mpi.h>

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

namespace shardrt_test {

struct Axis {
  std::string name;
  int64_t size;
};

/// An axis or sub-axis of a test mesh: {axis index, pre_size, size}.
inline shardrt_axis_ref full(int64_t axis, int64_t size) { return {axis, 1, size}; }
inline shardrt_axis_ref sub(int64_t axis, int64_t pre, int64_t size) { return {axis, pre, size}; }

/// A tensor of a test program: per dim, the axes that shard it.
struct Tensor {
  std::string name;
  int64_t dtype;
  std::vector<int64_t> shape;
  int64_t mesh;
  std::vector<std::vector<shardrt_axis_ref>> dims;
};

/// Owns every array a shardrt_program points to.
class Program {
public:
  explicit Program(int64_t devices) { program_.num_devices = devices; }
  Program(const Program &) = delete;

  int64_t addMesh(const std::string &name, const std::vector<Axis> &axes,
                  const std::vector<int64_t> &deviceIds = {}) {
    strings_.push_back(name);
    shardrt_mesh mesh{strings_.back().c_str(), static_cast<int64_t>(axes.size()), nullptr, nullptr,
                      nullptr};
    auto &names = namePointers_.emplace_back();
    auto &sizes = ints_.emplace_back();
    for (const Axis &axis : axes) {
      strings_.push_back(axis.name);
      names.push_back(strings_.back().c_str());
      sizes.push_back(axis.size);
    }
    mesh.axis_names = names.data();
    mesh.axis_sizes = sizes.data();
    if (!deviceIds.empty())
      mesh.device_ids = ints_.emplace_back(deviceIds).data();
    meshes_.push_back(mesh);
    return static_cast<int64_t>(meshes_.size()) - 1;
  }
  /// The mesh as a shardrt_mesh (valid until the next addMesh).
  const shardrt_mesh &mesh(int64_t index) const { return meshes_[index]; }

  void addInput(const Tensor &t) { inputs_.push_back(describe(t)); }
  void addOutput(const Tensor &t) { outputs_.push_back(describe(t)); }
  /// A collective group to make at start-up.
  void addGroup(int64_t mesh, const std::vector<shardrt_axis_ref> &axes) {
    auto &stored = refs_.emplace_back(axes);
    groups_.push_back({mesh, static_cast<int64_t>(axes.size()), stored.data()});
  }

  /// shardrt_program.release_scratch (read by the runtime on every
  /// collective, so it may change after shardrt_init).
  void releaseScratch(bool on) { program_.release_scratch = on ? 1 : 0; }

  const shardrt_program *get() {
    program_.name = "test";
    program_.num_meshes = static_cast<int64_t>(meshes_.size());
    program_.meshes = meshes_.data();
    program_.num_inputs = static_cast<int64_t>(inputs_.size());
    program_.inputs = inputs_.data();
    program_.num_outputs = static_cast<int64_t>(outputs_.size());
    program_.outputs = outputs_.data();
    program_.num_groups = static_cast<int64_t>(groups_.size());
    program_.groups = groups_.data();
    return &program_;
  }

private:
  shardrt_tensor describe(const Tensor &t) {
    strings_.push_back(t.name);
    auto &shape = ints_.emplace_back(t.shape);
    auto &counts = ints_.emplace_back();
    auto &axes = refs_.emplace_back();
    for (const auto &dim : t.dims) {
      counts.push_back(static_cast<int64_t>(dim.size()));
      axes.insert(axes.end(), dim.begin(), dim.end());
    }
    counts.resize(t.shape.size(), 0);
    return {t.name.empty() ? nullptr : strings_.back().c_str(),
            t.dtype,
            static_cast<int64_t>(t.shape.size()),
            shape.data(),
            t.mesh,
            counts.data(),
            axes.data()};
  }

  shardrt_program program_{};
  std::deque<std::string> strings_;
  std::deque<std::vector<const char *>> namePointers_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<shardrt_axis_ref>> refs_;
  std::vector<shardrt_mesh> meshes_;
  std::vector<shardrt_tensor> inputs_, outputs_;
  std::vector<shardrt_group> groups_;
};

/// Row-major coordinates of a mesh position.
inline std::vector<int64_t> coordinates(const shardrt_mesh &mesh, int64_t position) {
  std::vector<int64_t> coords(static_cast<size_t>(mesh.num_axes));
  for (int64_t a = mesh.num_axes - 1; a >= 0; --a) {
    coords[a] = position % mesh.axis_sizes[a];
    position /= mesh.axis_sizes[a];
  }
  return coords;
}

/// The sub-coordinate "x":(m)k covers of coordinate c: (c / (n/(m*k))) % k.
inline int64_t digit(const shardrt_mesh &mesh, const shardrt_axis_ref &axis, int64_t c) {
  return c / (mesh.axis_sizes[axis.axis] / (axis.pre_size * axis.size)) % axis.size;
}

/// The mesh positions of the group of `position`, in group-index order,
/// straight from the contract: the positions that agree on every digit the
/// axes do not cover, ordered by the mixed-radix number of their digits.
inline std::vector<int64_t> groupMembers(const shardrt_mesh &mesh,
                                         const std::vector<shardrt_axis_ref> &axes,
                                         int64_t position) {
  int64_t devices = 1, size = 1;
  for (int64_t a = 0; a < mesh.num_axes; ++a)
    devices *= mesh.axis_sizes[a];
  for (const auto &axis : axes)
    size *= axis.size;
  auto uncovered = [&](int64_t p) {
    std::vector<int64_t> c = coordinates(mesh, p);
    for (const auto &axis : axes)
      c[axis.axis] -= digit(mesh, axis, c[axis.axis]) *
                      (mesh.axis_sizes[axis.axis] / (axis.pre_size * axis.size));
    return c;
  };
  std::vector<int64_t> members(static_cast<size_t>(size), -1);
  for (int64_t q = 0; q < devices; ++q) {
    if (uncovered(q) != uncovered(position))
      continue;
    std::vector<int64_t> c = coordinates(mesh, q);
    int64_t index = 0;
    for (const auto &axis : axes)
      index = index * axis.size + digit(mesh, axis, c[axis.axis]);
    members[index] = q;
  }
  return members;
}

/// Counts checks on this rank; prints the first failures with the rank.
class Checker {
public:
  explicit Checker(int rank) : rank_(rank) {}
  bool check(bool ok, const std::string &what) {
    ++checks_;
    if (!ok && ++failures_ <= 20)
      std::fprintf(stderr, "rank %d: FAILED: %s\n", rank_, what.c_str());
    return ok;
  }
  /// Collective: prints the total on rank 0; returns the exit status.
  int finish(const char *name) {
    long long mine[2] = {checks_, failures_}, total[2];
    MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0)
      std::printf("%s: %lld checks, %lld failed\n", name, total[0], total[1]);
    return total[1] == 0 ? 0 : 1;
  }

private:
  int rank_;
  long long checks_ = 0, failures_ = 0;
};

} // namespace shardrt_test
