// Getting source text into the compiler: reading a file or stdin, refusing
// binary input, and cutting a file into `// -----` chunks for
// --split-input-file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

/// Reads all of `path` ("-" = stdin). On failure returns nullopt and sets
/// `error`, e.g. `cannot open 'x.shd': No such file or directory`.
std::optional<std::string> readSource(const std::string &path, std::string &error);

/// Why a buffer is not source text: the first offending byte and a message
/// such as `NUL byte at offset 12`.
struct NotText {
  size_t offset;
  std::string reason;
};

/// The first offset from `from` on whose byte is not printable ASCII (0x20 to
/// 0x7e), or text.size(): the scans of whole files skip such runs eight bytes
/// at a time.
size_t skipPrintableAscii(std::string_view text, size_t from);

/// Checks that `text` is UTF-8 without NUL or other control bytes (tab, line
/// feed, carriage return and form feed are allowed). Returns the first
/// problem, or nullopt when `text` is fine.
std::optional<NotText> findNonText(std::string_view text);

/// Splits `text` at every line that starts with `// -----` (leading blanks
/// allowed) into chunks for --split-input-file. The marker lines belong to no
/// chunk. Each chunk is preceded by one empty line for every line of the file
/// before it, so that its line numbers are the file's. Without a marker the
/// whole text is the only chunk.
std::vector<std::string> splitInput(const std::string &text);

/// The `// -----` line that separates chunks in --split-input-file output.
inline constexpr std::string_view kSplitMarker = "// -----";

} // namespace shardc
