// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/worker_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/process_state.h"
#include "lib/launch/console/worker_terminal.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/program.h"

extern char** environ;

namespace accel {

std::string workerName(const WorkerSpec& spec) {
  return spec.label.empty() ? "rank " + std::to_string(spec.rank) : spec.label;
}

namespace {

// The launcher's environment with the worker's variables laid over it.
std::vector<std::string> workerEnvironment(const WorkerProcess& w, int restart_count) {
  std::vector<std::pair<std::string, std::string>> ours = w.spec->env;
  if (!w.error_file.empty()) ours.emplace_back(launch_env::kErrorFile, w.error_file);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool overridden = std::find(w.spec->unset.begin(), w.spec->unset.end(), name) != w.spec->unset.end();
    for (const auto& kv : ours) overridden |= kv.first == name;
    if (!overridden) env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : ours) {
    env.push_back(name + "=" + (name == launch_env::kRestartCount ? std::to_string(restart_count) : value));
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs in the child between fork and exec: async-signal-safe calls only.
void writeStderr(const char* s) { (void)!::write(2, s, ::strlen(s)); }

// `interpreter_note` is said after exec's reason when the program exists but exec found no
// file: then what is missing is the interpreter its #! line names.
// `inherit`: a descriptor of the launcher's the worker keeps across exec (-1: none).
[[noreturn]] void execChild(pid_t launcher, int in, int out_w, int err_w, int inherit, const cpu_set_t* cpus,
                            char* const* argv, char* const* envp, const char* interpreter_note) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) _exit(1);  // the launcher died before prctl took effect
  // Where Yama's ptrace_scope is 1, only the launcher and its descendants (the stack tools it
  // runs: lib/launch/stacks/) may attach to read this worker's stack; elsewhere this does nothing.
  ::prctl(PR_SET_PTRACER, launcher, 0, 0, 0);
  if (in < 0) in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) ::dup2(in, 0);
  ::dup2(out_w, 1);
  ::dup2(err_w, 2);
  if (inherit >= 0) ::fcntl(inherit, F_SETFD, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // An ignored disposition would survive exec: the signals the launcher forwards must reach the
  // worker's default or its own handler, whatever the launcher inherited (SIGHUP under nohup
  // stays ignored: signal_channel.h). SIGTTIN is ignored by a launcher that reads a terminal
  // (console/terminal_input.h), never on the workers' behalf.
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGTTIN}) ::signal(s, SIG_DFL);
  if (cpus && ::sched_setaffinity(0, sizeof *cpus, cpus) != 0) {  // the worker still runs, unpinned
    writeStderr("accel: warning: enable_cpu_affinity: cannot pin this worker: ");
    writeStderr(::strerror(errno));
    writeStderr("\n");
  }
  ::execve(argv[0], argv, envp);
  const int error = errno;
  writeStderr("accel: error: cannot execute ");
  writeStderr(argv[0]);
  writeStderr(": ");
  writeStderr(::strerror(error));
  if (error == ENOENT && ::access(argv[0], F_OK) == 0) writeStderr(interpreter_note);
  writeStderr("\n");
  _exit(127);
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
  return processState(pid).describe();
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
    Pty p = openPty(io.columns, io.rows);
    return {p.master, p.slave};
  }
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw cannotStart(w, "pipe");
  ::fcntl(ends[0], F_SETFL, O_NONBLOCK);
  return {ends[0], ends[1]};
}

}  // namespace

void spawnWorker(WorkerProcess& w, int restart_count, const WorkerIo& io) {
  const std::array<int, 2> out = openStream(w, io.out_pty, io);
  std::array<int, 2> err{};
  try {
    err = openStream(w, io.err_pty, io);
  } catch (...) {
    ::close(out[0]);
    ::close(out[1]);
    throw;
  }
  std::vector<std::string> args = w.spec->argv;
  std::vector<std::string> env = workerEnvironment(w, restart_count);
  auto argv = pointers(args);
  auto envp = pointers(env);
  cpu_set_t cpus;  // built before fork: the child may only make async-signal-safe calls
  CPU_ZERO(&cpus);
  for (int c : w.spec->cpus) CPU_SET(c, &cpus);
  const auto shebang = readShebang(args[0]);  // launch checked it, but it may have gone since
  const std::string interpreter_note =
      shebang ? fmt::format(" (its interpreter {}, from its #! line, is missing)", shebang->interpreter) : "";
  const pid_t launcher = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    Error e = cannotStart(w, "fork");
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    throw e;
  }
  if (pid == 0)
    execChild(launcher, io.input && io.out_pty ? out[1] : -1, out[1], err[1], io.inherit,
              w.spec->cpus.empty() ? nullptr : &cpus, argv.data(), envp.data(), interpreter_note.c_str());
  ::setpgid(pid, pid);  // also here, so the group exists before any signal is sent to it
  ::close(out[1]);
  ::close(err[1]);
  w.pid = pid;
  w.out_fd = out[0];
  w.err_fd = err[0];
  w.out_pty = io.out_pty;
  w.err_pty = io.err_pty;
  w.takes_input = io.input && io.out_pty;
  w.running = true;
  w.status = 0;
  w.stopped_by_us = false;
  w.sigkilled_by_us = false;
}

void signalGroup(const WorkerProcess& w, int signal) {
  if (w.pid > 0) ::kill(-w.pid, signal);
}

}  // namespace accel
