// SPDX-License-Identifier: Apache-2.0
// The launcher's side of the flight recorder (launch_env.h kFlightFd): shared memory from
// memfd_create holding one ring (lib/common/flight_ring.h) per local rank, in which each
// libaccel_runtime worker records its collectives. The launcher reads a rank's ring whenever it
// wants (a stop, a lost machine, `accel stacks`), whatever the worker is doing, and after it has
// died. It lives as long as the launcher; a worker of a later round starts its ring afresh.
// Workers that do not link libaccel_runtime leave theirs empty. Single-threaded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/flight_ring.h"
#include "lib/common/shared_memory.h"
#include "lib/launch/flight/torch_records.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

class FlightBoard {
 public:
  FlightBoard() = default;
  ~FlightBoard();  // the hook's folder removed
  FlightBoard(const FlightBoard&) = delete;
  FlightBoard& operator=(const FlightBoard&) = delete;

  // The rings of the plan's workers, plan.flight_entries each (none when 0). Returns a warning
  // line where they cannot be made: the launch goes on without.
  std::string open(const plan::LaunchPlan& plan);
  int fd() const { return memory_.fd(); }  // -1 when there is none
  // Python workers (plan.torch_flight): the folder of accel's hook, first on their PYTHONPATH, and
  // of their worker servers' sockets (plan/worker_env.h flightSocket); "" for none.
  const std::string& hookFolder() const { return hook_; }
  // A round starts: the dumps torch wrote in the hook's folder in earlier rounds are removed, so
  // that a stop keeps only this round's (plan/worker_env.h torchDumpPrefix).
  void newRound() const;
  // LOCAL_RANK `local_rank`'s ring as it is now; nullopt when it holds none.
  std::optional<accel::flight::Dump> read(int local_rank) const;
  // `w`'s ring, only when it is `w`'s process's (a slot keeps an earlier round's until the new
  // worker starts its own); nullopt for a worker that is no rank of this launcher's (mpirun).
  std::optional<accel::flight::Dump> read(const WorkerProcess& w) const;
  // The running Python ranks of `workers`, to ask through their worker servers (plan.torch_flight;
  // none otherwise).
  std::vector<flight::TorchRank> torchRanks(const std::vector<WorkerProcess>& workers,
                                            const plan::LaunchPlan& plan) const;

 private:
  SharedMemory memory_;
  size_t ring_ = 0;  // bytes of one ring
  std::string hook_;
};

}  // namespace accel::launch::supervise
