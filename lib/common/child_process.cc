// SPDX-License-Identifier: Apache-2.0
#include "lib/common/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lib/common/error.h"

namespace accel {

namespace {

volatile sig_atomic_t g_foreground_child = 0;

void passOn(int signal) {
  if (g_foreground_child > 0) ::kill(static_cast<pid_t>(g_foreground_child), signal);
}

std::vector<char*> cArgs(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int statusOf(int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw); }

pid_t waitFor(pid_t pid, int& raw) {
  pid_t got;
  while ((got = ::waitpid(pid, &raw, 0)) < 0 && errno == EINTR) {
  }
  return got;
}

// Restores the signal dispositions a child must start with, then execs (or exits 127).
[[noreturn]] void execChild(const std::vector<std::string>& argv) {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  auto args = cArgs(argv);
  ::execvp(args[0], args.data());
  _exit(127);
}

}  // namespace

int runForeground(const std::vector<std::string>& argv) {
  struct sigaction pass = {}, ignore = {}, old_int = {}, old_term = {}, old_hup = {};
  pass.sa_handler = passOn;
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGTERM, &pass, &old_term);
  ::sigaction(SIGHUP, &pass, &old_hup);
  const pid_t pid = ::fork();
  if (pid == 0) execChild(argv);
  int raw = 0;
  const bool started = pid > 0;
  const int fork_errno = errno;
  if (started) {
    g_foreground_child = pid;
    waitFor(pid, raw);
    g_foreground_child = 0;
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  if (!started) throw Error("cannot start " + argv[0] + ": " + std::strerror(fork_errno));
  return statusOf(raw);
}

std::optional<std::string> captureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ::dup2(null, 0);
    ::dup2(null, 2);
    ::dup2(fds[1], 1);
    execChild(argv);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool timed_out = false;
  for (char buf[4096];;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fds[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int raw = 0;
  waitFor(pid, raw);
  if (timed_out || statusOf(raw) != 0) return std::nullopt;
  return out;
}

}  // namespace accel
