// SPDX-License-Identifier: Apache-2.0
// The head of a hostfile launch: it starts one `accel launch --from_head` per selected host
// (ssh_command.h), writes each its orders (head_orders.h), relays their output, and ends the
// job on every host when it must. The launchers themselves run the job as on any several
// machines: machine 0's job channel, fail-fast, heartbeats, restarts, the failure summary.
//
//   - Each launcher runs in its own process group, with the head's death as its signal
//     (PR_SET_PDEATHSIG), so a Ctrl-C reaches the head only and the head ends the job in order.
//   - Output: each launcher's lines, whole, on the head's stdout or stderr as they came; a
//     launcher's own lines ("accel: …") get its host's name ("accel: [node2] …"); the workers'
//     already carry theirs ("[node2:rank 3]").
//   - Ready: a launcher says kLauncherReady (head_orders.h) once its orders, settings and plan
//     were good. A launcher that exits before that could not start (ssh failed: 255; no accel
//     there: 127; a usage error there: 2, another protocol, a bad setting): the head stops the
//     rest at once. After it, every exit is the job's, which the job channel ends on every
//     machine.
//   - Stopping: the head closes every launcher's stdin, which each takes as SIGTERM (stop the
//     workers within the grace period, then exit): on SIGINT/SIGTERM/SIGHUP/SIGQUIT to the head,
//     when a launcher could not start, and heartbeat timeout + grace period + 5 s after a failure
//     or machine 0's end if launchers still run. Those still running grace period + 5 s after
//     their links closed get SIGTERM, 5 s later SIGKILL. A launcher's pipes left open 2 s after
//     its exit are closed.
//   - SIGUSR1 and SIGUSR2 go to every launcher over its link, which passes them to its workers
//     (SLURM's warning before a time limit). Ctrl-Z cannot stop the other machines' workers: the
//     head says so and the job goes on.
//   - Exit code: 130 after SIGINT (128 + the signal for the others); else, for a launcher that
//     could not start, 1 when ssh failed (the host and ssh's last line named) and 2 when the host
//     has no accel or refused the orders; else the first launcher's non-zero code in time (a
//     failed worker's own); else 0.
#pragma once

#include <vector>

#include "lib/launch/fleet/ssh_command.h"

namespace accel::launch::fleet {

struct FleetTimes {
  double grace_period = 0;
  double heartbeat_timeout = 0;
};

int runFleet(const std::vector<FleetMember>& members, const FleetTimes& times, bool quiet);

// A hostfile head's plan (Kind::Fleet): its members (ssh_command.h) run as above.
int runHead(const plan::LaunchPlan& plan, const settings::LaunchSettings& s, const facts::Facts& f);

}  // namespace accel::launch::fleet
