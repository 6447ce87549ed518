// Source text -> IR. The ANTLR parser recognises the structure; the IR builder
// resolves names (values, meshes), decodes tensor types, priorities and
// attributes, and reports every error at its exact token.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <memory>

namespace shardc {

/// When the IR is built: from the finished parse tree, or on a second
/// thread while the parser is still reading (each statement as soon as it
/// is parsed). The module and the diagnostics are the same either way; Auto
/// builds while parsing a file of 64 KiB or more on a machine with a second
/// core.
enum class IRBuild { Auto, AfterParse, WhileParsing };

/// Parses `file` into a Module. Syntax and name errors go to `diags`; the
/// parser recovers and keeps going so one run reports several errors. Returns
/// null only when the text could not be turned into a module at all; check
/// `diags.hasErrors()` before running passes.
std::unique_ptr<Module> parseModule(const SourceFile &file, DiagnosticEngine &diags,
                                    IRBuild when = IRBuild::Auto);

} // namespace shardc
