// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/member_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/fleet/head_orders.h"

namespace accel {

namespace {

// `fd` as the child's `target` (0, 1, 2), open across exec even when it already is that number
// (the head started with that descriptor closed).
void becomes(int fd, int target) {
  if (fd == target) {
    ::fcntl(target, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

// Runs in the child between fork and exec: async-signal-safe calls only. Dispositions as
// worker_process.h gives the workers: SIGHUP ignored on entry stays so (signal_channel.h).
[[noreturn]] void execMember(pid_t head, int in, int out, int err, char* const* args) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != head) _exit(1);
  becomes(in, 0);
  becomes(out, 1);
  becomes(err, 2);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT}) ::signal(s, SIG_DFL);
  ::execvp(args[0], args);
  const char* why = ::strerror(errno);
  const char* parts[] = {"accel: error: cannot execute ", args[0], ": ", why, "\n"};
  for (const char* s : parts) (void)!::write(2, s, ::strlen(s));
  _exit(127);
}

void pipeOrThrow(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot start the hosts' launchers: pipe: {}", ::strerror(errno)),
                "raise the limit of open files (ulimit -n)");
  }
}

}  // namespace

void spawn(Child& c) {
  int in[2], out[2], err[2];
  pipeOrThrow(in);
  pipeOrThrow(out);
  pipeOrThrow(err);
  std::vector<char*> args;
  for (const auto& a : c.m->argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t head = ::getpid();
  c.pid = ::fork();
  if (c.pid < 0) throw Error(fmt::format("cannot start {}'s launcher: fork: {}", c.m->host, ::strerror(errno)));
  if (c.pid == 0) execMember(head, in[0], out[1], err[1], args.data());
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  c.in = in[1];
  ::fcntl(c.in, F_SETFL, O_NONBLOCK);
  c.out = {out[0], 1, ""};
  c.err = {err[0], 2, ""};
  ::fcntl(c.out.fd, F_SETFL, O_NONBLOCK);  // reap() drains what is left without waiting
  ::fcntl(c.err.fd, F_SETFL, O_NONBLOCK);
  c.pending = encodeHeadOrders(c.m->orders);
  c.running = true;
}

}  // namespace accel
