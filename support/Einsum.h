// Einsum equations ("bij,bjk->bik"): the one parser behind infer-types, the
// sharding rules, the interpreter and the LLVM backend's contraction plan.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::support {

/// One term of an equation: its labels (one letter per dim) and where it
/// starts in the text (its first letter; for an empty term, the character
/// after the ',' or "->" before it).
struct EinsumTerm {
  std::string labels;
  size_t offset = 0;
};

/// A parsed equation: one term per operand, and the result's term.
struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  EinsumTerm output;

  /// Every label once: the output's, then the others (the summed ones) in
  /// order of first appearance in the inputs. The combined index space of
  /// a contraction.
  std::string labelsOutputFirst() const;
};

/// The result of parseEinsum: an equation, or what is wrong with the text.
struct EinsumParse {
  enum class Error {
    None,
    MissingArrow,        ///< no "->": the output is implicit, not supported
    UnexpectedCharacter, ///< not a letter, space, ',' (before "->") or the arrow
  };
  Error error = Error::None;
  /// For UnexpectedCharacter: where in the text.
  size_t errorOffset = 0;
  EinsumEquation equation;

  bool ok() const { return error == Error::None; }
  /// The error as a message: "equation needs an explicit output '->'" or
  /// "unexpected character in equation: '.'"; "" when ok.
  std::string message(std::string_view text) const;
};

/// Parses an einsum equation: terms of letters separated by ',', an
/// explicit "->", then the output's letters; spaces are allowed anywhere
/// (as numpy allows). Repeated labels and label/shape agreement are for the
/// caller to check.
EinsumParse parseEinsum(std::string_view text);

} // namespace shardc::support
