// SPDX-License-Identifier: Apache-2.0
// This machine's part of the job as it stands (watch/job_status.h), read when someone asks
// (/metrics, `accel top`): the supervisor's workers, their output streams' tallies, their flight
// recorder rings (the collectives finished, the one they are in), and the kernel's word on their
// CPU time and memory. Reading it changes nothing and calls into no worker.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/flight_board.h"
#include "lib/launch/supervise/worker_process.h"
#include "lib/launch/watch/job_status.h"

namespace accel::launch::supervise {

// What the supervisor knows beside its workers.
struct JobMoment {
  int round = 0;
  int restarts = 0;
  double started = 0;                                   // the launch, seconds since the epoch
  std::chrono::steady_clock::time_point round_start{};  // this round's
  bool ended = false;
  int exit_code = 0;
  std::string verdict{};
  std::string events{};  // this machine's event log file, if any
};

watch::MachineStatus machineStatus(const plan::LaunchPlan& plan, const std::vector<WorkerProcess>& workers,
                                   const FlightBoard& flights, const JobMoment& moment);

}  // namespace accel::launch::supervise
