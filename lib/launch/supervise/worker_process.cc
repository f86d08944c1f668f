// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/process/child.h"
#include "lib/common/process/process_state.h"
#include "lib/launch/console/worker_terminal.h"
#include "lib/launch/facts/program.h"
#include "lib/launch/launch_env.h"

extern char** environ;

namespace accel::launch::supervise {

std::string workerName(const plan::WorkerSpec& spec) {
  return spec.label.empty() ? "rank " + std::to_string(spec.rank) : spec.label;
}

namespace {

// The launcher's environment with the worker's variables laid over it, less its `unset`.
std::vector<std::string> environmentOf(const plan::Env& env, const std::vector<std::string>& unset) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = std::find(unset.begin(), unset.end(), name) != unset.end();
    for (const auto& kv : env) overridden |= kv.first == name;
    if (!overridden) out.push_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace

int WorkerProcess::exitCode() const {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string WorkerProcess::describeExit() const {
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return fmt::format("was killed by signal SIG{} ({})", name ? name : "?", WTERMSIG(status));
  }
  return fmt::format("exited with code {}", exitCode());
}

bool WorkerProcess::killedFromOutside() const {
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !sigkilled_by_us;
}

std::string WorkerProcess::describeNow() const {
  if (pid <= 0) return "not started";
  if (!running) return describeExit();
  return process::processState(pid).describe();
}

namespace {

Error cannotStart(const WorkerProcess& w, const char* what) {
  return Error(fmt::format("cannot start rank {}: {} failed: {}", w.spec->rank, what, ::strerror(errno)),
               "the launcher is out of file descriptors or processes: raise `ulimit -n` / `ulimit -u`, or "
               "start fewer workers");
}

// A stream's two ends: {read end, the worker's end}, through a pseudo-terminal or a pipe.
std::array<int, 2> openStream(const WorkerProcess& w, bool pty, const WorkerIo& io) {
  if (pty) {
    console::Pty p = console::openPty(io.columns, io.rows);
    return {p.master, p.slave};
  }
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw cannotStart(w, "pipe");
  ::fcntl(ends[0], F_SETFL, O_NONBLOCK);
  return {ends[0], ends[1]};
}

}  // namespace

void spawnWorker(WorkerProcess& w, const plan::Env& env, const std::vector<std::string>& unset, const WorkerIo& io) {
  const std::array<int, 2> out = openStream(w, io.out_pty, io);
  std::array<int, 2> err{-1, -1};
  try {
    if (!io.one_pty) err = openStream(w, io.err_pty, io);
  } catch (...) {
    ::close(out[0]);
    ::close(out[1]);
    throw;
  }
  process::ChildSpec spec;
  spec.argv = w.spec->argv;
  spec.inherit_env = false;
  spec.env = environmentOf(env, unset);
  spec.stdin_fd = io.input && io.out_pty ? out[1] : -1;  // the input rank reads its stdout's terminal
  spec.stdout_fd = out[1];
  spec.stderr_fd = io.one_pty ? out[1] : err[1];
  for (int fd : io.inherit) {
    if (fd >= 0) spec.keep_fds.push_back(fd);
  }
  spec.own_group = true;        // a signal to the worker reaches everything it started
  spec.death_signal = SIGKILL;  // no worker outlives its launcher
  spec.parent_traces = true;    // the stack tools the launcher runs may read it (lib/launch/stacks/)
  spec.cpus = w.spec->cpus;
  spec.memory_node = w.spec->memory_node;
  const auto shebang = facts::readShebang(spec.argv[0]);  // launch checked it, but it may have gone since
  if (shebang) {
    spec.missing_interpreter_note =
        fmt::format(" (its interpreter {}, from its #! line, is missing)", shebang->interpreter);
  }
  pid_t pid = -1;
  try {
    pid = process::spawnChild(spec);
  } catch (...) {
    for (int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw;
  }
  ::close(out[1]);
  if (err[1] >= 0) ::close(err[1]);
  w.pid = pid;
  w.out_fd = out[0];
  w.err_fd = err[0];
  w.out_pty = io.out_pty;
  w.err_pty = io.err_pty && !io.one_pty;
  w.one_pty = io.one_pty;
  w.takes_input = io.input && io.out_pty;
  w.running = true;
  w.status = 0;
  w.stopped_by_us = false;
  w.sigkilled_by_us = false;
}

void signalGroup(const WorkerProcess& w, int signal) {
  if (w.pid > 0) ::kill(-w.pid, signal);
}

}  // namespace accel::launch::supervise
