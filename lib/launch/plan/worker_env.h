// SPDX-License-Identifier: Apache-2.0
// A worker's environment, derived from its plan when it starts (and for --dry_run): set over the
// launcher's own, less the plan's `unset`. The one place that says which variable a worker gets:
//   - its place in the job, torchrun's names (launch_env.h): RANK, LOCAL_RANK, ROLE_RANK,
//     WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_WORLD_SIZE, ROLE_NAME,
//     MASTER_ADDR, MASTER_PORT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID (Accelerate's
//     simple launcher form: MASTER_ADDR and MASTER_PORT only, where the job has several);
//   - the job's identity (ACCEL_RUN_ID, ACCEL_STORE_TOKEN), the round (TORCHELASTIC_RESTART_COUNT),
//     the machine's label (ACCEL_MACHINE), the interface towards machine 0
//     (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME);
//   - the settings' exports (exports.h), the worker's own (an mpirun's), --env KEY=VALUE where
//     accel sets no such variable itself;
//   - what only the running launcher knows, last: the worker's error file, the launcher's socket
//     for questions about ranks, the progress board.
#pragma once

#include <string>

#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::plan {

// What the supervisor adds when it starts a worker ("" / -1: none).
struct SpawnContext {
  std::string error_file;       // TORCHELASTIC_ERROR_FILE
  std::string launcher_socket;  // ACCEL_LAUNCHER_SOCKET
  int progress_fd = -1;         // ACCEL_PROGRESS_FD
  int flight_fd = -1;           // ACCEL_FLIGHT_FD
  std::string flight_hook;      // the folder of accel's torch hook (plan/torch_flight.h), "" for none
};

// Where local rank `local_rank`'s torch worker server listens, in the hook's folder.
std::string flightSocket(const std::string& hook_folder, int local_rank);
// Where torch's NCCL watchdog dumps a rank's record on a timeout: this prefix and the rank
// (launch_env.h kTorchFrDumpTempFile), in the hook's folder.
std::string torchDumpPrefix(const std::string& hook_folder);

// The plan's variables sorted by name, then the context's.
Env workerEnvironment(const LaunchPlan& plan, const WorkerSpec& worker, const SpawnContext& context = {});

// "--env A=1: ignored, accel sets A itself" for each --env that names one of accel's variables.
std::vector<std::string> ignoredUserEnv(const LaunchPlan& plan, const std::vector<std::string>& assignments);

}  // namespace accel::launch::plan
