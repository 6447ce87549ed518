// Writing a compiler output all at once, so that a failed run never leaves a
// partial or stale-looking file behind.
#pragma once

#include <string>
#include <string_view>

namespace shardc {

/// Writes `text` to `path` ("-" = stdout). A file is first written to a
/// temporary file in the same directory and then renamed over `path`, so
/// readers see either the old file or the complete new one (through a
/// symbolic link, the file it points to is replaced); devices and FIFOs are
/// written in place. Returns an error
/// message such as `cannot write 'out.shd': No such file or directory`, or
/// an empty string on success.
std::string writeOutput(const std::string &path, std::string_view text);

} // namespace shardc
