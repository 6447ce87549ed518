// The canonical printer (../shared/LANGUAGE.md section 7). Printing, parsing
// the output and printing again gives identical text.
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

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

// The leaves the module printer spells with (ir/PrintAttributes.cpp).
/// `"text"`: the frontend keeps a string literal's text between the quotes
/// as written, escapes included, so it prints back unchanged.
std::string printStringLiteral(const std::string &s);
/// `{"x", "y":(2)2}`.
std::string printAxisSet(const std::vector<AxisRef> &axes);
/// `<@m, [...], replicated={...}>`: a sharding after its `sharding` keyword.
std::string printShardingBody(const Sharding &sharding);
/// `dense<[[1, 2], [3, 4]]>` or the splat `dense<0.5>`.
std::string printDense(const DenseLiteral &dense);

} // namespace shardc
