// A rank ended by a signal says which rank it was before it dies, so that a
// job killed on one node is not a mystery (MPICH's launcher names only the
// PID and host). Signals the launcher itself sends while it tears the job
// down (it is the rank's parent) stay quiet: they name no culprit. Each
// handler then restores the action it replaced (MPI's, the sanitizers', the
// default) and lets the signal take its course.
#include "runtime/Context.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace shardrt {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT,  SIGHUP, SIGQUIT, SIGXCPU, SIGUSR1,
                            SIGUSR2, SIGSEGV, SIGBUS, SIGFPE,  SIGILL,  SIGABRT};
constexpr int kMaxSignal = 65;
struct sigaction previous[kMaxSignal];
char prefix[512]; // "PROG: rank R: error: ", built before any signal
size_t prefixLength = 0;

/// Appends `text` to buffer (async-signal-safe).
void append(char *buffer, size_t &length, size_t capacity, const char *text) {
  while (*text && length + 1 < capacity)
    buffer[length++] = *text++;
}

void appendNumber(char *buffer, size_t &length, size_t capacity, long value) {
  char digits[24];
  int n = 0;
  unsigned long v = value < 0 ? 0UL - static_cast<unsigned long>(value) : value;
  do
    digits[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) && n < 24);
  if (value < 0)
    append(buffer, length, capacity, "-");
  while (n > 0 && length + 1 < capacity)
    buffer[length++] = digits[--n];
}

const char *signalName(int signal) {
  switch (signal) {
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGHUP:
    return "SIGHUP";
  case SIGQUIT:
    return "SIGQUIT";
  case SIGXCPU:
    return "SIGXCPU (CPU time limit)";
  case SIGUSR1:
    return "SIGUSR1";
  case SIGUSR2:
    return "SIGUSR2";
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  default:
    return "SIGABRT";
  }
}

void onSignal(int signal, siginfo_t *info, void *) {
  bool sent = info->si_code <= 0; // kill(), raise(), sigqueue(): not a fault
  bool fromLauncher = sent && info->si_pid == getppid();
  if (!fromLauncher) {
    char line[768];
    size_t length = 0;
    append(line, length, sizeof line, prefix);
    if (sent && info->si_pid != getpid()) {
      append(line, length, sizeof line, "killed by signal ");
      append(line, length, sizeof line, signalName(signal));
      append(line, length, sizeof line, " from process ");
      appendNumber(line, length, sizeof line, info->si_pid);
    } else if (sent) { // abort() and the like
      append(line, length, sizeof line, "internal error: ended by ");
      append(line, length, sizeof line, signalName(signal));
    } else {
      append(line, length, sizeof line, "internal error: crashed with ");
      append(line, length, sizeof line, signalName(signal));
    }
    append(line, length, sizeof line, "\n");
    ssize_t ignored = write(STDERR_FILENO, line, length);
    (void)ignored;
  }
  sigaction(signal, &previous[signal], nullptr);
  // A fault re-executes the faulting instruction and meets the restored
  // action; a sent signal is sent again.
  if (sent)
    raise(signal);
}

} // namespace

void installSignalHandlers(const shardrt_context *ctx) {
  std::string text = format("%s: rank %d: error: ", ctx->programName.c_str(), ctx->rank);
  prefixLength = std::min(text.size(), sizeof prefix - 1);
  std::memcpy(prefix, text.data(), prefixLength);
  prefix[prefixLength] = '\0';
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = onSignal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals)
    sigaction(signal, &action, &previous[signal]);
}

} // namespace shardrt
