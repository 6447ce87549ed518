// Document text and LSP <-> compiler position conversion.
#include "tools/shardc-lsp/TextDocument.h"

#include <algorithm>

namespace shardc::lsp {
namespace {

/// The byte length of the UTF-8 sequence starting with `lead`; 1 for a byte
/// that cannot start one (counted as one unit, like a replacement character).
size_t sequenceLength(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if ((lead & 0xE0) == 0xC0)
    return 2;
  if ((lead & 0xF0) == 0xE0)
    return 3;
  if ((lead & 0xF8) == 0xF0)
    return 4;
  return 1;
}

} // namespace

int utf16Length(std::string_view bytes) {
  int units = 0;
  for (size_t i = 0; i < bytes.size();) {
    size_t n = std::min(sequenceLength(static_cast<unsigned char>(bytes[i])), bytes.size() - i);
    units += n == 4 ? 2 : 1; // outside the BMP: a surrogate pair
    i += n;
  }
  return units;
}

size_t bytesForUtf16(std::string_view bytes, int units) {
  size_t i = 0;
  int seen = 0;
  while (i < bytes.size() && seen < units) {
    size_t n = std::min(sequenceLength(static_cast<unsigned char>(bytes[i])), bytes.size() - i);
    seen += n == 4 ? 2 : 1;
    i += n;
  }
  return i;
}

LineIndex::LineIndex(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      starts_.push_back(i + 1);
}

std::string_view LineIndex::lineText(int line) const {
  size_t begin = starts_[line];
  size_t end = line + 1 < lineCount() ? starts_[line + 1] - 1 : text_.size();
  if (end > begin && text_[end - 1] == '\r')
    --end;
  return text_.substr(begin, end - begin);
}

size_t LineIndex::offset(Position p) const {
  if (p.line < 0)
    return 0;
  if (p.line >= lineCount())
    return text_.size();
  return starts_[p.line] + bytesForUtf16(lineText(p.line), std::max(p.character, 0));
}

int LineIndex::byteColumn(Position p) const {
  if (p.line < 0 || p.line >= lineCount())
    return 1;
  return static_cast<int>(offset(p) - starts_[p.line]) + 1;
}

Position LineIndex::position(size_t offset) const {
  offset = std::min(offset, text_.size());
  int line =
      static_cast<int>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin()) -
      1;
  std::string_view text = lineText(line);
  size_t col = std::min(offset - starts_[line], text.size());
  return Position{line, utf16Length(text.substr(0, col))};
}

Position LineIndex::position(int line, int byteCol) const {
  if (line < 1)
    return Position{0, 0};
  if (line > lineCount())
    return position(text_.size());
  std::string_view text = lineText(line - 1);
  size_t col = std::min(static_cast<size_t>(std::max(byteCol, 1) - 1), text.size());
  return Position{line - 1, utf16Length(text.substr(0, col))};
}

nlohmann::json toJson(Position p) { return {{"line", p.line}, {"character", p.character}}; }

Position positionFromJson(const nlohmann::json &j) {
  return Position{j.at("line").get<int>(), j.at("character").get<int>()};
}

TextDocument::TextDocument(std::string uri, int64_t version, std::string text)
    : uri_(std::move(uri)), version_(version), text_(std::move(text)), lines_(text_) {}

void TextDocument::applyChange(const nlohmann::json &change) {
  std::string newText = change.at("text").get<std::string>();
  if (!change.contains("range")) {
    text_ = std::move(newText);
  } else {
    const nlohmann::json &range = change.at("range");
    size_t begin = lines_.offset(positionFromJson(range.at("start")));
    size_t end = lines_.offset(positionFromJson(range.at("end")));
    if (end < begin)
      std::swap(begin, end);
    text_.replace(begin, end - begin, newText);
  }
  lines_ = LineIndex(text_);
}

nlohmann::json TextDocument::range(const Loc &loc) const {
  Position start = lines_.position(loc.line, loc.col);
  Position end = lines_.position(loc.line, loc.col + std::max(loc.length, 1));
  return {{"start", toJson(start)}, {"end", toJson(end)}};
}

} // namespace shardc::lsp
