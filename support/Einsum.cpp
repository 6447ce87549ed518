// Parsing einsum equations into terms with their text offsets (Einsum.h).
#include "support/Einsum.h"

#include <cctype>

namespace shardc::support {

std::string EinsumEquation::labelsOutputFirst() const {
  std::string labels = output.labels;
  for (const EinsumTerm &term : inputs)
    for (char c : term.labels)
      if (labels.find(c) == std::string::npos)
        labels += c;
  return labels;
}

std::string EinsumParse::message(std::string_view text) const {
  switch (error) {
  case Error::None:
    return "";
  case Error::MissingArrow:
    return "equation needs an explicit output '->'";
  case Error::UnexpectedCharacter:
    return std::string("unexpected character in equation: '") + text[errorOffset] + "'";
  }
  return "";
}

EinsumParse parseEinsum(std::string_view text) {
  EinsumParse result;
  size_t arrow = text.find("->");
  if (arrow == std::string_view::npos) {
    result.error = EinsumParse::Error::MissingArrow;
    return result;
  }
  auto bad = [&](size_t offset) {
    result.error = EinsumParse::Error::UnexpectedCharacter;
    result.errorOffset = offset;
    result.equation = EinsumEquation();
    return result;
  };
  std::vector<EinsumTerm> &inputs = result.equation.inputs;
  inputs.push_back({"", 0});
  for (size_t i = 0; i < arrow; ++i) {
    char c = text[i];
    if (c == ',') {
      inputs.push_back({"", i + 1});
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      if (inputs.back().labels.empty())
        inputs.back().offset = i;
      inputs.back().labels += c;
    } else if (c != ' ') {
      return bad(i);
    }
  }
  EinsumTerm &output = result.equation.output;
  output.offset = arrow + 2;
  for (size_t i = arrow + 2; i < text.size(); ++i) {
    char c = text[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      if (output.labels.empty())
        output.offset = i;
      output.labels += c;
    } else if (c != ' ') {
      return bad(i);
    }
  }
  return result;
}

} // namespace shardc::support
