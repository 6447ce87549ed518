// Unit tests for the driver's input helpers (tools/shardc/SourceInput.h): the
// text check on every kind of bad UTF-8, and the --split-input-file splitter's
// line bookkeeping.
#include "frontend/SourceInput.h"

#include <catch2/catch.hpp>

using namespace shardc;

namespace {

/// The offset findNonText reports, or -1 when the text is fine.
long badOffset(std::string_view text) {
  auto bad = findNonText(text);
  return bad ? static_cast<long>(bad->offset) : -1;
}

} // namespace

TEST_CASE("findNonText accepts UTF-8 text", "[driver]") {
  CHECK(badOffset("") == -1);
  CHECK(badOffset("@m = <[\"x\"=2]>\n\t\r\f") == -1);
  CHECK(badOffset("\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf") ==
        -1); // é → 😀 U+10FFFF
}

TEST_CASE("skipPrintableAscii stops at the first byte outside 0x20-0x7e", "[driver]") {
  // Against a byte-by-byte scan, from every start, on texts where one byte
  // of every value (0x00-0xff) sits at every position of an 8-byte word,
  // behind long printable runs (the 8-byte steps) and after one another.
  auto reference = [](std::string_view text, size_t from) {
    size_t i = from;
    while (i < text.size() && static_cast<unsigned char>(text[i]) >= 0x20 &&
           static_cast<unsigned char>(text[i]) < 0x7f)
      ++i;
    return i;
  };
  for (int byte = 0; byte < 256; ++byte)
    for (size_t at = 0; at < 24; ++at) {
      std::string text(40, 'a');
      text[at] = static_cast<char>(byte);
      text[at + 9] = static_cast<char>(255 - byte);
      for (size_t from = 0; from <= text.size(); from += 3)
        REQUIRE(skipPrintableAscii(text, from) == reference(text, from));
    }
  std::string printable;
  for (int c = 0x20; c < 0x7f; ++c)
    printable += static_cast<char>(c);
  CHECK(skipPrintableAscii(printable + printable, 0) == 2 * printable.size());
  CHECK(skipPrintableAscii(printable + "\n" + printable, 5) == printable.size());
}

TEST_CASE("findNonText reports the first bad byte", "[driver]") {
  CHECK(badOffset(std::string_view("ab\0c", 4)) == 2);
  CHECK(findNonText(std::string_view("ab\0c", 4))->reason == "NUL byte at offset 2");
  CHECK(badOffset("a\x1b[0m") == 1);         // control character
  CHECK(badOffset("a\x7f") == 1);            // DEL
  CHECK(badOffset("ok \x80") == 3);          // lone continuation byte
  CHECK(badOffset("\xc0\xaf") == 0);         // overlong '/'
  CHECK(badOffset("\xe0\x80\xaf") == 0);     // overlong, 3 bytes
  CHECK(badOffset("\xed\xa0\x80") == 0);     // surrogate U+D800
  CHECK(badOffset("\xf4\x90\x80\x80") == 0); // above U+10FFFF
  CHECK(badOffset("\xf5\x80\x80\x80") == 0); // invalid lead byte
  CHECK(badOffset("x\xe2\x86") == 1);        // truncated at the end
  CHECK(badOffset("x\xe2\x86y") == 1);       // truncated in the middle
}

TEST_CASE("splitInput keeps the file's line numbers", "[driver]") {
  auto chunks = splitInput("a\n// -----\nb\nc\n  // ----- trailing words\nd");
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0] == "a\n");
  CHECK(chunks[1] == "\n\nb\nc\n"); // b is line 3
  CHECK(chunks[2] == std::string(5, '\n') + "d");
}

TEST_CASE("splitInput without markers or text", "[driver]") {
  CHECK(splitInput("") == std::vector<std::string>{""});
  CHECK(splitInput("a\nb\n") == std::vector<std::string>{"a\nb\n"});
  CHECK(splitInput("// -----\n") == std::vector<std::string>{"", "\n"});
  CHECK(splitInput("// ---- not a marker\n") == std::vector<std::string>{"// ---- not a marker\n"});
}
