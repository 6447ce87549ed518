// --verify-diagnostics: checks the diagnostics of a run against the
// `expected-*` comments of the source, with MLIR's semantics
// (mlir/lib/IR/Diagnostics.cpp, SourceMgrDiagnosticVerifierHandler):
//
//   %y = foo %x   // expected-error {{unknown op}}        same line
//   // expected-error @+1 {{unknown op}}                   N lines below (@-N above)
//   // expected-note @above {{...}}                        the last non-expectation line
//   // expected-warning @below {{...}}                     the next non-expectation line
//   // expected-error @unknown {{...}}                     a diagnostic without a location
//
// A diagnostic matches an expectation of the same severity on its line whose
// text is a substring of its message; columns are not compared. Every
// diagnostic must match and every expectation must be matched. Notes attached
// to a diagnostic are matched as diagnostics of their own at their own
// location (a note without one stands at its diagnostic's location, as in
// MLIR), but only when the buffer contains at least one `expected-note`;
// otherwise notes are ignored (MLIR always checks them; our hints are notes,
// and most negative tests are about the error itself).
#pragma once

#include "ir/Diagnostics.h"

#include <deque>

namespace shardc {

/// Checks `produced` (the diagnostics of compiling `file`) against the
/// expectations written in `file`. Each mismatch is reported into `out` as
/// an error: `unexpected error: MSG` at the diagnostic's location, or
/// `expected error "MSG" was not produced` at the expectation. Malformed
/// expectation comments are errors too. Returns true when everything matched.
bool verifyDiagnostics(const SourceFile &file, const std::deque<Diagnostic> &produced,
                       DiagnosticEngine &out);

} // namespace shardc
