// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "lib/common/error.h"
#include "lib/common/process/child.h"

namespace accel::process {

namespace {

volatile sig_atomic_t g_foreground_child = 0;
volatile sig_atomic_t g_passed_on = 0;

void passOn(int signal) {
  g_passed_on = 1;
  if (g_foreground_child > 0) ::kill(static_cast<pid_t>(g_foreground_child), signal);
}

int statusOf(int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw); }

pid_t waitFor(pid_t pid, int& raw) {
  pid_t got;
  while ((got = ::waitpid(pid, &raw, 0)) < 0 && errno == EINTR) {
  }
  return got;
}

}  // namespace

ForegroundEnd runForeground(const std::vector<std::string>& argv) {
  g_passed_on = 0;
  struct sigaction pass = {}, ignore = {}, old_int = {}, old_term = {}, old_hup = {};
  pass.sa_handler = passOn;
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGTERM, &pass, &old_term);
  // SIGHUP ignored on entry (nohup) stays so, for this process and the step alike.
  ::sigaction(SIGHUP, nullptr, &old_hup);
  if (old_hup.sa_handler != SIG_IGN) ::sigaction(SIGHUP, &pass, nullptr);
  // It shares this process's terminal, its group and its streams: a step of this command.
  ChildSpec spec;
  spec.argv = argv;
  spec.search_path = true;
  spec.stdin_fd = 0;
  int raw = 0;
  std::optional<Error> failed;
  try {
    const pid_t pid = spawnChild(spec);
    g_foreground_child = pid;
    waitFor(pid, raw);
    g_foreground_child = 0;
  } catch (const Error& e) {
    failed = e;
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  if (failed) throw *failed;
  return {statusOf(raw), g_passed_on != 0};
}

namespace {

struct Running {
  pid_t pid = -1;
  int fd = -1;
};

Running startCaptured(const std::vector<std::string>& argv, bool with_stderr) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ChildSpec spec;
  spec.argv = argv;
  spec.search_path = true;
  spec.stdout_fd = fds[1];
  spec.stderr_fd = with_stderr ? fds[1] : null;
  pid_t pid = -1;
  try {
    pid = spawnChild(spec);
  } catch (const Error&) {
  }
  ::close(fds[1]);
  if (null >= 0) ::close(null);
  if (pid < 0) {
    ::close(fds[0]);
    return {};
  }
  return {pid, fds[0]};
}

// Reads every open pipe until each reaches its end or the deadline passes; closes them.
void readUntil(std::vector<Running>& running, std::vector<Captured>& out,
               std::chrono::steady_clock::time_point deadline) {
  for (char buf[4096];;) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < running.size(); ++i) {
      if (running[i].fd >= 0) fds.push_back({running[i].fd, POLLIN, 0}), which.push_back(i);
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (fds.empty() || left.count() <= 0) break;
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) continue;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      Running& r = running[which[k]];
      const ssize_t n = ::read(r.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        out[which[k]].output.append(buf, static_cast<size_t>(n));
        continue;
      }
      ::close(r.fd);
      r.fd = -1;
    }
  }
}

// True when `pid` exited by `deadline` (its status in `raw`): a program closes its output a
// moment before it exits.
bool exitsBy(pid_t pid, int& raw, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const pid_t got = ::waitpid(pid, &raw, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) return got == pid;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    ::usleep(2000);
  }
}

}  // namespace

std::vector<Captured> captureOutputs(const std::vector<std::vector<std::string>>& argvs,
                                     std::chrono::milliseconds limit, bool with_stderr) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<Running> running;
  std::vector<Captured> out(argvs.size());
  for (const auto& argv : argvs) running.push_back(startCaptured(argv, with_stderr));
  readUntil(running, out, deadline);
  for (size_t i = 0; i < running.size(); ++i) {
    Running& r = running[i];
    if (r.pid < 0) continue;
    int raw = 0;
    if (r.fd >= 0 || !exitsBy(r.pid, raw, deadline)) {
      out[i].timed_out = true;
      ::kill(r.pid, SIGKILL);
      waitFor(r.pid, raw);
    }
    if (r.fd >= 0) ::close(r.fd);
    out[i].status = statusOf(raw);
  }
  return out;
}

std::optional<std::string> captureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  Captured c = captureOutputs({argv}, limit, false).front();
  if (c.timed_out || c.status != 0) return std::nullopt;
  return c.output;
}

}  // namespace accel::process
