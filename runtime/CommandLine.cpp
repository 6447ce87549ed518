// Options of the executables. Every rank parses the same argv, so every rank
// reaches the same verdict; only rank 0 prints it.
#include "runtime/CommandLine.h"

#include "runtime/ProgramText.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace shardrt {
namespace {

/// "--name=value" or "--name value": the value, advancing `i` past it.
bool optionValue(const std::string &arg, const char *name, int argc, char **argv, int &i,
                 std::string &value, std::string &error) {
  std::string prefix = std::string(name) + "=";
  if (arg.compare(0, prefix.size(), prefix) == 0) {
    value = arg.substr(prefix.size());
    return true;
  }
  if (arg != name)
    return false;
  if (i + 1 >= argc) {
    error = format("option %s needs a value", name);
    return true;
  }
  value = argv[++i];
  return true;
}

std::string inputNames(const shardrt_program &program) {
  std::string names;
  for (int64_t i = 0; i < program.num_inputs; ++i)
    names += format("%s%s", i ? ", " : "", program.inputs[i].name);
  return program.num_inputs ? names : "none";
}

void parseInput(const shardrt_program &program, const std::string &value, Options &options,
                std::string &error) {
  size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
    error = format("--input %s - expected NAME=FILE.npy", value.c_str());
    return;
  }
  std::string name = value.substr(0, eq);
  if (name[0] == '%')
    name = name.substr(1);
  for (int64_t i = 0; i < program.num_inputs; ++i) {
    if (name != program.inputs[i].name)
      continue;
    if (!options.inputFiles[i].empty())
      error = format("--input %s - input \"%s\" given twice", value.c_str(), name.c_str());
    options.inputFiles[i] = value.substr(eq + 1);
    return;
  }
  error = format("--input %s - unknown input \"%s\" (inputs: %s)", value.c_str(), name.c_str(),
                 inputNames(program).c_str());
}

void parseSeed(const std::string &value, Options &options, std::string &error) {
  errno = 0;
  char *end = nullptr;
  unsigned long long seed = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end || errno)
    error = format("--random-inputs %s - expected a non-negative integer seed", value.c_str());
  options.randomInputs = true;
  options.randomSeed = seed;
}

/// Every input needs --input or --random-inputs; names the first one missing.
void checkEveryInputGiven(const shardrt_program &program, const Options &options,
                          std::string &error) {
  for (int64_t i = 0; i < program.num_inputs && !options.randomInputs; ++i) {
    if (!options.inputFiles[i].empty())
      continue;
    const shardrt_tensor &t = program.inputs[i];
    error = format("no value for input \"%s\" (%s): give --input %s=FILE.npy, or "
                   "--random-inputs SEED",
                   t.name, typeText(t).c_str(), t.name);
    return;
  }
}

void parseRepeat(const std::string &value, Options &options, std::string &error) {
  errno = 0;
  char *end = nullptr;
  long long k = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || k < 1)
    error = format("--repeat %s - expected a positive integer", value.c_str());
  else
    options.repeat = k;
}

} // namespace

ParsedCommandLine parseCommandLine(const shardrt_program &program, int argc, char **argv) {
  ParsedCommandLine parsed;
  Options &options = parsed.options;
  options.inputFiles.assign(static_cast<size_t>(program.num_inputs), "");
  std::string &error = parsed.error;
  for (int i = 1; i < argc && error.empty(); ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h")
      parsed.help = true;
    else if (arg == "--profile")
      options.profile = true;
    else if (optionValue(arg, "--input", argc, argv, i, value, error)) {
      if (error.empty())
        parseInput(program, value, options, error);
    } else if (optionValue(arg, "--output-dir", argc, argv, i, value, error)) {
      if (error.empty() && value.empty())
        error = "--output-dir needs a directory";
      options.outputDir = value;
    } else if (optionValue(arg, "--trace", argc, argv, i, value, error)) {
      if (error.empty() && value.empty())
        error = "--trace needs a file name";
      options.tracePath = value;
    } else if (optionValue(arg, "--repeat", argc, argv, i, value, error)) {
      if (error.empty())
        parseRepeat(value, options, error);
    } else if (optionValue(arg, "--random-inputs", argc, argv, i, value, error)) {
      if (error.empty())
        parseSeed(value, options, error);
    } else
      error = format("unknown option '%s'", arg.c_str());
  }
  if (error.empty() && !parsed.help)
    checkEveryInputGiven(program, options, error);
  return parsed;
}

std::string helpText(const shardrt_program &program, const std::string &name) {
  std::string text =
      format("usage: mpirun -n %lld %s [--input NAME=FILE.npy]... [--output-dir DIR] [--profile] "
             "[--trace FILE.json] [--repeat K]\n\n",
             static_cast<long long>(program.num_devices), name.c_str());
  text += format("Compiled by shardc from %s for %lld device%s, one MPI rank each.\n\n",
                 program.name ? program.name : "?", static_cast<long long>(program.num_devices),
                 program.num_devices == 1 ? "" : "s");
  text += "meshes:\n";
  bool anyMesh = false;
  for (int64_t m = 0; m < program.num_meshes; ++m)
    if (*program.meshes[m].name) { // the unnamed mesh of a program without meshes is not shown
      text += format("  @%s = %s\n", program.meshes[m].name, meshText(program.meshes[m]).c_str());
      anyMesh = true;
    }
  if (!anyMesh)
    text += "  (none: every value is whole on every device)\n";
  text += "\ninputs (--input NAME=FILE.npy, or --random-inputs SEED):\n";
  for (int64_t i = 0; i < program.num_inputs; ++i) {
    const shardrt_tensor &t = program.inputs[i];
    text += format("  %%%s: %s%s\n", t.name, typeText(t).c_str(), shardingText(program, t).c_str());
  }
  text += "\noutputs (DIR/resultN.npy with --output-dir, else a summary on stdout):\n";
  for (int64_t i = 0; i < program.num_outputs; ++i) {
    const shardrt_tensor &t = program.outputs[i];
    text += format("  result%lld: %s%s\n", static_cast<long long>(i), typeText(t).c_str(),
                   shardingText(program, t).c_str());
  }
  text += "\noptions:\n"
          "  --input NAME=FILE.npy  the value of input NAME (.npy: little-endian, C order);\n"
          "                         each rank reads only its own shard\n"
          "  --random-inputs SEED   inputs without --input get the deterministic values of\n"
          "                         `shardc --interpret --random-inputs SEED`\n"
          "  --output-dir DIR       write result0.npy, result1.npy, ... into DIR\n"
          "  --profile              print time per op and bytes and time per collective\n"
          "  --trace FILE.json      write a timeline of every rank's ops and collectives\n"
          "                         (Chrome trace-event JSON: Perfetto, chrome://tracing)\n"
          "  --repeat K             run the computation K times (benchmarking)\n"
          "  --help                 print this text\n";
  return text;
}

} // namespace shardrt
