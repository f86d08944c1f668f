// SPDX-License-Identifier: Apache-2.0
// One launcher a head starts (fleet.h): a child process in its own process group, with the
// head's death as its SIGTERM (PR_SET_PDEATHSIG), its stdin the head's link (the orders, then
// forwarded signals) and its stdout and stderr pipes the head reads without blocking. Owned by
// the head's single thread.
#pragma once

#include <sys/types.h>

#include <deque>
#include <string>

#include "lib/launch/fleet/ssh_command.h"

namespace accel::launch::fleet {

// One of a launcher's output streams, relayed line by line to the head's `to` (1 or 2).
struct Stream {
  int fd = -1;
  int to = 1;  // the head's stdout or stderr
  std::string partial;
};

// A launcher the head started, and what the head knows of it.
struct Child {
  const FleetMember* m = nullptr;
  pid_t pid = -1;
  int in = -1;  // the link: orders, then silence until the head closes it
  std::string pending;
  Stream out, err;
  // A remote launcher's stderr lines before it is ready: ssh's own, shown once, in the error when
  // ssh failed (exit 255), else as they came once it is ready or has failed otherwise.
  std::deque<std::string> held;
  size_t held_dropped = 0;  // held lines let go, the oldest first, past the bound
  bool running = false;
  bool ready = false;  // it said kLauncherReady: its exit is the job's, not a failure to start
  int code = 0;
  double exited_at = 0;
};

// Starts `c.m`'s command with the pipes above, the orders queued on its link (`c.pending`), and
// the signals the head reads from its signalfd unblocked in the child. Throws Error naming the
// host when a pipe or the fork fails; an exec failure shows as exit code 127 with a message.
void spawn(Child& c);

}  // namespace accel::launch::fleet
