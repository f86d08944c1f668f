// SPDX-License-Identifier: Apache-2.0
// Where this process sits in the job, read from the launcher's environment (lib/launch/
// launch_env.h), from MPI's variables as Accelerate accepts them, or a world of one.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lib/common/defaults.h"

namespace accel {

struct DistributedEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = defaults::kMainProcessPort;
  std::string token;            // ACCEL_STORE_TOKEN
  std::string launcher_socket;  // ACCEL_LAUNCHER_SOCKET: where the launcher answers questions about ranks
  std::string source;           // "accel launch / torchrun", "Open MPI", "MPI" (other MPI launchers), "single process"
  bool use_cpu = false;         // ACCELERATE_USE_CPU
  std::string mixed_precision = "no";
  int gradient_accumulation_steps = 1;
};

// Returns a variable's value or nullopt: the process's environment, or a test's.
using EnvReader = std::function<std::optional<std::string>(const char*)>;
EnvReader processEnvReader();

// Throws Error on inconsistent values (e.g. RANK >= WORLD_SIZE) naming the variables.
DistributedEnv readDistributedEnv(const EnvReader& getenv);
DistributedEnv readDistributedEnv();  // from this process's environment

}  // namespace accel
