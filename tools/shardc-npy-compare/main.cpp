// shardc-npy-compare: the .npy tool of the tests.
//
//   shardc-npy-compare A B [--rtol R] [--atol A]   files, or directories of resultN.npy
//   shardc-npy-compare --print FILE.npy            type and every value
//   shardc-npy-compare --write TYPE "V V ..." OUT  e.g. --write 2x2xf32 "1 2 3 4" a.npy
//   shardc-npy-compare --write-random TYPE SEED OUT   randomTensor(TYPE, SEED, 0)
//
// Exit codes: 0 equal (or done), 1 different (where, and both values, on
// stdout), 2 bad usage or a file that cannot be read or written.
#include "backend/interpreter/Interpreter.h"
#include "backend/interpreter/Npy.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <sstream>

namespace {

using shardc::interp::Tensor;

shardc::TensorType parseType(const std::string &text) {
  std::string spelled = text.rfind("tensor<", 0) == 0 ? text : "tensor<" + text + ">";
  std::string message;
  size_t offset = 0;
  std::optional<shardc::TensorType> type = shardc::parseTensorType(spelled, message, offset);
  if (!type)
    throw shardc::interp::Error(fmt::format("bad type '{}': {}", text, message));
  return *type;
}

Tensor parseValues(const shardc::TensorType &type, const std::string &text) {
  std::istringstream in(text);
  std::vector<double> values;
  std::string word;
  while (in >> word) {
    size_t used = 0;
    double v = 0;
    try {
      v = word == "nan"    ? NAN
          : word == "inf"  ? INFINITY
          : word == "-inf" ? -INFINITY
                           : std::stod(word, &used);
    } catch (const std::exception &) {
    }
    if (used != word.size() && word != "nan" && word != "inf" && word != "-inf")
      throw shardc::interp::Error(fmt::format("not a number: '{}'", word));
    values.push_back(v);
  }
  if (static_cast<int64_t>(values.size()) != type.numElements())
    throw shardc::interp::Error(
        fmt::format("{} needs {} values, {} given", type.str(), type.numElements(), values.size()));
  Tensor t(type);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (t.holdsFloats())
      t.setFloat(i, values[i]);
    else
      t.setInt(i, static_cast<uint64_t>(static_cast<int64_t>(values[i])));
  }
  return t;
}

std::string printTensor(const Tensor &t) {
  std::vector<std::string> values;
  for (int64_t i = 0; i < t.size(); ++i)
    values.push_back(t.holdsFloats() ? fmt::format("{}", t.floatAt(i))
                                     : std::to_string(t.intAt(i)));
  return fmt::format("{}\n{}\n", t.type().str(), fmt::join(values, " "));
}

/// The resultN.npy (any *.npy) files of a directory, by name.
std::set<std::string> npyFiles(const std::string &dir) {
  std::set<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".npy")
      names.insert(entry.path().filename().string());
  return names;
}

int compare(const std::string &a, const std::string &b, double rtol, double atol) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> pairs;
  if (fs::is_directory(a) && fs::is_directory(b)) {
    std::set<std::string> left = npyFiles(a), right = npyFiles(b);
    if (left != right) {
      fmt::print("different files: {} has {}; {} has {}\n", a, fmt::join(left, " "), b,
                 fmt::join(right, " "));
      return 1;
    }
    for (const std::string &name : left)
      pairs.emplace_back(a + "/" + name, b + "/" + name);
  } else {
    pairs.emplace_back(a, b);
  }
  int status = 0;
  for (const auto &[x, y] : pairs) {
    std::string why;
    if (!shardc::interp::allClose(shardc::interp::readNpyAnyType(x),
                                  shardc::interp::readNpyAnyType(y), rtol, atol, &why)) {
      fmt::print("{} and {} differ: {}\n", x, y, why);
      status = 1;
    }
  }
  return status;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"compare, print and write .npy files", "shardc-npy-compare"};
  std::vector<std::string> files;
  double rtol = 1e-5, atol = 1e-6;
  std::string print;
  std::vector<std::string> write, writeRandom;
  app.add_option("FILES", files, "two .npy files, or two directories of them");
  app.add_option("--rtol", rtol, "relative tolerance for floats")->capture_default_str();
  app.add_option("--atol", atol, "absolute tolerance for floats")->capture_default_str();
  auto *printOpt = app.add_option("--print", print, "print a file's type and values");
  auto *writeOpt =
      app.add_option("--write", write, "TYPE VALUES OUT: write these values")->expected(3);
  auto *randomOpt =
      app.add_option("--write-random", writeRandom, "TYPE SEED OUT: write random values")
          ->expected(3);
  printOpt->excludes(writeOpt)->excludes(randomOpt);
  writeOpt->excludes(randomOpt);
  try {
    app.parse(argc, argv);
    bool action = printOpt->count() || writeOpt->count() || randomOpt->count();
    if (!action && files.size() != 2)
      throw CLI::ValidationError("give two files (or directories) to compare");
    if (action && !files.empty())
      throw CLI::ValidationError("--print, --write and --write-random take no other files");
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  try {
    if (!print.empty()) {
      fmt::print("{}", printTensor(shardc::interp::readNpyAnyType(print)));
      return 0;
    }
    if (!write.empty()) {
      shardc::interp::writeNpy(write[2], parseValues(parseType(write[0]), write[1]));
      return 0;
    }
    if (!writeRandom.empty()) {
      uint64_t seed = std::stoull(writeRandom[1]);
      shardc::interp::writeNpy(writeRandom[2],
                               shardc::interp::randomTensor(parseType(writeRandom[0]), seed, 0));
      return 0;
    }
    return compare(files[0], files[1], rtol, atol);
  } catch (const std::exception &e) {
    fmt::print(stderr, "shardc-npy-compare: error: {}\n", e.what());
    return 2;
  }
}
