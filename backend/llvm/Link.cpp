// Finding libshardrt and linking with the system C++ compiler.
#include "backend/llvm/Link.h"

#include "support/SelfPath.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <cstdlib>
#include <unistd.h>

namespace shardc::llvmgen {
namespace {

bool hasRuntime(const std::string &dir) { return llvm::sys::fs::exists(dir + "/libshardrt.a"); }

std::string trimmedFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  std::string text = (*buffer)->getBuffer().str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

} // namespace

std::optional<RuntimeLocation> findRuntime(std::string &error) {
  if (const char *dir = std::getenv("SHARDC_RUNTIME_DIR"); dir && *dir) {
    if (hasRuntime(dir))
      return RuntimeLocation{dir, "$SHARDC_RUNTIME_DIR"};
    error = std::string("$SHARDC_RUNTIME_DIR is ") + dir + ", which holds no libshardrt.a";
    return std::nullopt;
  }
  const std::string exeDir = executableDir();
  const std::string installed = exeDir + "/../lib/shardc";
  if (!exeDir.empty() && hasRuntime(installed)) {
    llvm::SmallString<256> real;
    llvm::sys::fs::real_path(installed, real);
    return RuntimeLocation{real.str().str(), "installed prefix"};
  }
  if (hasRuntime(SHARDC_BUILD_RUNTIME_DIR))
    return RuntimeLocation{SHARDC_BUILD_RUNTIME_DIR, "build tree"};
  error = "cannot find the runtime library libshardrt.a (looked in " + installed + " and " +
          SHARDC_BUILD_RUNTIME_DIR + "; set SHARDC_RUNTIME_DIR to its directory)";
  return std::nullopt;
}

std::vector<std::string> linkCommand(const std::vector<std::string> &objects,
                                     const std::string &output, const RuntimeLocation &runtime) {
  // The C++ compiler shardc was built with: libshardrt.a is C++ inside (its
  // loader picks libshardrt-mpich.so or libshardrt-openmpi.so at start-up and
  // finds it through the RUNPATH set here), and a sanitizer build's runtime
  // needs the same compiler's sanitizer libraries. No MPI at link time.
  std::vector<std::string> argv = {SHARDC_LINK_CXX_COMPILER};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), {"-o", output, "-L" + runtime.libraryDir,
                           "-Wl,-rpath," + runtime.libraryDir, "-lshardrt", "-ldl"});
  auto addFlags = [&argv](std::string_view flags) {
    while (!flags.empty()) {
      size_t space = flags.find(' ');
      if (space != 0)
        argv.emplace_back(flags.substr(0, space));
      flags = space == std::string_view::npos ? "" : flags.substr(space + 1);
    }
  };
  addFlags(SHARDC_LINK_BLAS_FLAGS);
  argv.insert(argv.end(), {"-lmvec", "-lm"});
  addFlags(SHARDC_LINK_EXTRA_FLAGS);
  return argv;
}

bool linkExecutable(const std::vector<std::string> &objects, const std::string &output,
                    const RuntimeLocation &runtime, std::string &error) {
  llvm::SmallString<256> dir(output);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (!llvm::sys::fs::is_directory(dir)) {
    error = "cannot write " + output + ": no directory " + std::string(dir.str());
    return false;
  }
  if (llvm::sys::fs::is_directory(output)) {
    error = "cannot write " + output + ": it is a directory";
    return false;
  }
  if (::access(std::string(dir.str()).c_str(), W_OK) != 0) {
    error = "cannot write " + output + ": directory " + std::string(dir.str()) + " is not writable";
    return false;
  }
  const std::string temporary = std::string(dir.str()) + "/." +
                                llvm::sys::path::filename(output).str() + ".shardc-link-" +
                                std::to_string(::getpid());
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("shardc-link", "log", log)) {
    error = "cannot create a temporary file for the linker's messages";
    return false;
  }
  // More than a few objects: in a response file (one quoted path a line), so
  // no command line grows with the number of kernels.
  std::vector<std::string> given = objects;
  llvm::SmallString<128> responseFile;
  if (objects.size() > 16) {
    int fd = -1;
    if (llvm::sys::fs::createTemporaryFile("shardc-link", "rsp", fd, responseFile)) {
      error = "cannot create a temporary file for the linker's inputs";
      return false;
    }
    llvm::raw_fd_ostream list(fd, /*shouldClose=*/true);
    for (const std::string &object : objects) {
      list << '"';
      for (char c : object)
        list << (c == '"' || c == '\\' ? "\\" : "") << c;
      list << "\"\n";
    }
    list.close();
    given = {"@" + responseFile.str().str()};
  }
  std::vector<std::string> argv = linkCommand(given, temporary, runtime);
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), log.str(), log.str()};
  std::string execError;
  int status = llvm::sys::ExecuteAndWait(argv[0], args, llvm::None, redirects, 0, 0, &execError);
  std::string messages = trimmedFile(log.str().str());
  llvm::sys::fs::remove(log);
  if (!responseFile.empty())
    llvm::sys::fs::remove(responseFile);
  if (status != 0) {
    llvm::sys::fs::remove(temporary);
    error = "linking " + output + " failed" + (execError.empty() ? "" : ": " + execError) +
            (messages.empty() ? "" : ":\n" + messages);
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, output)) {
    llvm::sys::fs::remove(temporary);
    error = "cannot write " + output + ": " + ec.message();
    return false;
  }
  return true;
}

} // namespace shardc::llvmgen
