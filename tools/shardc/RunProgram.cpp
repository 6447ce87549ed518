// --interpret / --simulate: inputs -> interpreter -> outputs.
#include "tools/shardc/RunProgram.h"

#include "backend/interpreter/Interpreter.h"
#include "backend/interpreter/Npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

namespace shardc {
namespace {

/// The arguments of `main`, one per parameter, from --input files or
/// --random-inputs; reports every problem, and returns nullopt if any.
std::optional<std::vector<interp::Tensor>>
readArguments(const Function &main, const RunOptions &options, DiagnosticEngine &diags) {
  const auto &params = main.body.args;
  std::vector<std::string> names;
  for (const auto &p : params)
    names.push_back(p->name);
  std::map<std::string, std::string> files; // parameter -> file
  bool ok = true;
  for (const std::string &input : options.inputs) {
    size_t eq = input.find('=');
    std::string name = input.substr(0, eq), file = input.substr(eq + 1);
    if (!name.empty() && name[0] == '%')
      name.erase(0, 1);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      auto d =
          diags.error(Loc{}, fmt::format("--input {} - @main has no parameter %{}", input, name));
      std::string guess = closestMatch(name, names);
      if (!guess.empty())
        d.note(Loc{}, fmt::format("did you mean {}?", guess));
      d.note(main.loc, names.empty()
                           ? std::string("@main has no parameters")
                           : fmt::format("@main's parameters: %{}", fmt::join(names, ", %")));
      ok = false;
      continue;
    }
    files[name] = file;
  }
  std::vector<interp::Tensor> args;
  for (size_t i = 0; i < params.size(); ++i) {
    const Value &param = *params[i];
    auto it = files.find(param.name);
    if (it != files.end()) {
      try {
        args.push_back(interp::readNpy(it->second, param.type));
      } catch (const interp::Error &e) {
        diags.error(Loc{}, fmt::format("--input {} - {}", param.name, e.what()))
            .note(param.loc, fmt::format("%{} is declared here: {}", param.name, param.type.str()));
        ok = false;
      }
    } else if (options.randomSeed) {
      try {
        args.push_back(interp::randomTensor(param.type, *options.randomSeed, i));
      } catch (const interp::Error &e) {
        diags.error(param.loc, fmt::format("parameter %{} - {}", param.name, e.what()));
        ok = false;
      }
    } else {
      diags
          .error(param.loc,
                 fmt::format("no input for parameter %{}: {}", param.name, param.type.str()))
          .note(Loc{},
                fmt::format("give --input {}=FILE.npy, or --random-inputs SEED", param.name));
      ok = false;
    }
  }
  if (!ok)
    return std::nullopt;
  return args;
}

/// `result0: tensor<4xf32> sharding<...>`, min/max/mean and the first values.
std::string summarize(size_t index, const interp::Tensor &t, const ResultSpec &spec) {
  std::string out = fmt::format("result{}: {}", index, t.type().str());
  if (spec.sharding)
    out += " " + spec.sharding->str();
  out += "\n";
  if (t.size() == 0)
    return out + "  (no elements)\n";
  double lo = t.asDouble(0), hi = lo, sum = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = t.asDouble(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  out += fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}\n", lo, hi,
                     sum / static_cast<double>(t.size()));
  const int64_t shown = std::min<int64_t>(t.size(), 8);
  std::vector<std::string> values;
  for (int64_t i = 0; i < shown; ++i)
    values.push_back(t.holdsFloats() ? fmt::format("{:.6g}", t.floatAt(i))
                                     : std::to_string(t.intAt(i)));
  out += fmt::format("  [{}{}]", fmt::join(values, ", "), shown < t.size() ? ", ..." : "");
  if (shown < t.size())
    out += fmt::format(" (first {} of {})", shown, t.size());
  return out + "\n";
}

bool writeResults(const std::vector<interp::Tensor> &results, const std::string &dir,
                  DiagnosticEngine &diags) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    diags.error(Loc{}, fmt::format("cannot create output directory '{}': {}", dir, ec.message()));
    return false;
  }
  std::vector<std::pair<std::string, interp::Tensor>> files;
  for (size_t i = 0; i < results.size(); ++i)
    files.emplace_back(fmt::format("{}/result{}.npy", dir, i), results[i]);
  try {
    interp::writeNpyFiles(files);
  } catch (const interp::Error &e) {
    diags.error(Loc{}, e.what());
    return false;
  }
  return true;
}

} // namespace

bool runProgram(const Module &module, const RunOptions &options, DiagnosticEngine &diags) {
  const Function *main = module.findFunction("main");
  if (!main) {
    std::vector<std::string> names;
    for (const auto &f : module.functions)
      names.push_back("@" + f->name);
    auto d = diags.error(Loc{}, "no function @main to run");
    d.note(Loc{}, names.empty() ? std::string("the file defines no functions")
                                : fmt::format("functions in the file: {}", fmt::join(names, ", ")));
    return false;
  }
  std::optional<std::vector<interp::Tensor>> args = readArguments(*main, options, diags);
  if (!args)
    return false;
  std::vector<interp::Tensor> results;
  try {
    results = interp::runFunction(module, *main, *args);
  } catch (const interp::Error &e) {
    diags.error(e.loc, e.what());
    return false;
  }
  if (!options.outputDir.empty())
    return writeResults(results, options.outputDir, diags);
  std::string text;
  for (size_t i = 0; i < results.size(); ++i)
    text += summarize(i, results[i], main->results.at(i));
  std::fputs(text.c_str(), stdout);
  return true;
}

} // namespace shardc
