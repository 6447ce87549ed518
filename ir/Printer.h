// The canonical printer (../shared/LANGUAGE.md section 7). Printing, parsing
// the output and printing again gives identical text.
#pragma once

#include "ir/IR.h"

#include <string>

namespace shardc {

/// The whole module in canonical form: meshes, the top-level snippet, then
/// functions, each as `.shd` text that parses back to the same module.
std::string printModule(const Module &module);

/// `tensor<4x8xf32>`.
std::string printType(const TensorType &type);
/// `sharding<@m, [{"x"}, {?}], replicated={"y"}>`.
std::string printSharding(const Sharding &sharding);
/// `<["x"=2, "y"=4]>` or `<["a"=2], device_ids=[1, 0]>` (ids dropped when
/// they are 0..N-1).
std::string printMeshBody(const Mesh &mesh);
/// An attribute value in source syntax.
std::string printAttribute(const Attribute &attr);

} // namespace shardc
