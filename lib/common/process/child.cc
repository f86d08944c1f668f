// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/child.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel::process {

namespace {

// What the child needs, made before fork: after it, only async-signal-safe calls.
struct Prepared {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  cpu_set_t cpus;
  bool pin = false;
  // set_mempolicy's node mask: up to kMaxNodes nodes; `prefer` false: the parent's policy.
  static constexpr int kMaxNodes = 1024;
  unsigned long nodes[kMaxNodes / (8 * sizeof(unsigned long))] = {};
  bool prefer = false;
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void prepare(const ChildSpec& spec, Prepared& p) {
  p.argv_storage = spec.argv;
  p.argv = pointers(p.argv_storage);
  if (!spec.inherit_env) {
    p.env_storage = spec.env;
    p.envp = pointers(p.env_storage);
  }
  CPU_ZERO(&p.cpus);
  for (int c : spec.cpus) CPU_SET(c, &p.cpus);
  p.pin = !spec.cpus.empty();
  if (spec.memory_node >= 0 && spec.memory_node < Prepared::kMaxNodes) {
    const size_t bits = 8 * sizeof(unsigned long);
    p.nodes[static_cast<size_t>(spec.memory_node) / bits] |= 1UL << (static_cast<size_t>(spec.memory_node) % bits);
    p.prefer = true;
  }
}

void say(const char* s) { (void)!::write(2, s, ::strlen(s)); }

// `fd` as the child's `target` (0, 1, 2), open across exec even when it already is that number.
void becomes(int fd, int target) {
  if (fd == target) {
    ::fcntl(target, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

void resetSignals() {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s : signalsReset()) ::signal(s, SIG_DFL);
}

// MPOL_PREFERRED (linux/mempolicy.h): allocations go to the node while it has room, elsewhere
// after; the kernel reads maxnode - 1 bits of the mask.
constexpr int kMpolPreferred = 1;

void pin(const Prepared& p) {
  if (p.pin && ::sched_setaffinity(0, sizeof p.cpus, &p.cpus) != 0) {
    say("accel: warning: cannot pin this worker to its CPUs: ");
    say(::strerror(errno));
    say("\n");
  }
  if (p.prefer && ::syscall(SYS_set_mempolicy, kMpolPreferred, p.nodes, 8 * sizeof p.nodes + 1) != 0) {
    say("accel: warning: cannot prefer this worker's NUMA node for its memory: ");
    say(::strerror(errno));
    say("\n");
  }
}

void execPrepared(const ChildSpec& spec, const Prepared& p) {
  char* const* envp = spec.inherit_env ? environ : p.envp.data();
  if (spec.search_path) {
    ::execvpe(p.argv[0], p.argv.data(), envp);
  } else {
    ::execve(p.argv[0], p.argv.data(), envp);
  }
}

[[noreturn]] void runChild(const ChildSpec& spec, const Prepared& p, pid_t parent) {
  if (spec.own_group) ::setpgid(0, 0);
  if (spec.death_signal) {
    ::prctl(PR_SET_PDEATHSIG, spec.death_signal);
    if (::getppid() != parent) _exit(1);  // the parent died before prctl took effect
  }
  if (spec.parent_traces) ::prctl(PR_SET_PTRACER, parent, 0, 0, 0);
  const int in = spec.stdin_fd >= 0 ? spec.stdin_fd : ::open("/dev/null", O_RDONLY);
  if (in >= 0) becomes(in, 0);
  if (spec.stdout_fd >= 0) becomes(spec.stdout_fd, 1);
  if (spec.stderr_fd >= 0) becomes(spec.stderr_fd, 2);
  for (int fd : spec.keep_fds) ::fcntl(fd, F_SETFD, 0);
  resetSignals();
  pin(p);
  if (spec.body) _exit(spec.body());
  execPrepared(spec, p);
  const int error = errno;
  say("accel: error: cannot execute ");
  say(p.argv[0]);
  say(": ");
  say(::strerror(error));
  if (error == ENOENT && ::access(p.argv[0], F_OK) == 0) say(spec.missing_interpreter_note.c_str());
  say("\n");
  _exit(127);
}

}  // namespace

const std::vector<int>& signalsReset() {
  static const std::vector<int> signals = {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGCHLD, SIGTTIN, SIGTTOU};
  return signals;
}

pid_t spawnChild(const ChildSpec& spec) {
  Prepared p;
  prepare(spec, p);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw Error(fmt::format("cannot start {}: fork failed: {}", spec.argv.empty() ? "a child" : spec.argv[0],
                            std::strerror(errno)),
                "the machine is out of processes or memory: raise `ulimit -u`, or start fewer");
  }
  if (pid == 0) runChild(spec, p, parent);
  if (spec.own_group) ::setpgid(pid, pid);  // also here: the group exists before any signal is sent to it
  return pid;
}

void execInPlace(const ChildSpec& spec) {
  Prepared p;
  prepare(spec, p);
  resetSignals();
  pin(p);
  execPrepared(spec, p);
}

}  // namespace accel::process
