// SPDX-License-Identifier: Apache-2.0
// The launcher's side of the progress board (launch_env.h kProgressFd): shared memory from
// memfd_create where each libaccel_runtime worker of this machine counts the collectives it
// finished, so that --hang_timeout takes a rank that trains without printing for a live one, and
// notes the step of each checkpoint it saved, so that a restart without progress is known. It
// lives as long as the launcher: a slot keeps the last saved step across rounds.
// The descriptor is inherited by the workers (worker_process.h keeps it open across exec) and
// read here after each turn of the supervisor's loop. Workers that do not link libaccel_runtime
// leave their slot at zero: their progress is their output alone. Single-threaded.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/common/shared_memory.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::supervise {

class ProgressBoard {
 public:
  // With --hang_timeout or --max_restarts: the board for the plan's workers (its fd() goes in
  // each one's environment, plan/worker_env.h).
  // Returns a warning line where it cannot be made (the launch goes on; output alone then counts).
  std::string open(const plan::LaunchPlan& plan);
  int fd() const { return memory_.fd(); }  // -1 when there is none
  // Whether a count changed since the last call.
  bool advanced();
  // The highest step of a checkpoint this machine's workers saved, in any round; -1 for none.
  long long savedStep() const;
  // How often the supervisor should look (milliseconds), -1 when there is no board.
  int pollMs() const { return fd() >= 0 ? 250 : -1; }

 private:
  // LOCAL_RANK r's slot: its collectives, then its last saved step plus one (launch_env.h).
  std::atomic<uint64_t>* slot(size_t local_rank) const;

  SharedMemory memory_;
  std::vector<uint64_t> seen_;
};

}  // namespace accel::launch::supervise
