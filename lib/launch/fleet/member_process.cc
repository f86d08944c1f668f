// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/member_process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/process/child.h"
#include "lib/launch/fleet/head_orders.h"

namespace accel::launch::fleet {

namespace {

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
  process::ChildSpec spec;
  spec.argv = c.m->argv;
  spec.search_path = true;  // ssh, or this accel
  spec.stdin_fd = in[0];
  spec.stdout_fd = out[1];
  spec.stderr_fd = err[1];
  spec.own_group = true;  // a Ctrl-C reaches the head only, which ends the job in order
  // The head's death is a stop (SIGTERM: the launcher stops its workers), not a kill that would
  // leave them to their own parent-death signal without a word.
  spec.death_signal = SIGTERM;
  try {
    c.pid = process::spawnChild(spec);
  } catch (...) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw;
  }
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

}  // namespace accel::launch::fleet
