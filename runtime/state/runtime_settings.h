// SPDX-License-Identifier: Apache-2.0
// The runtime's own settings, read once from the launcher's environment (lib/launch/
// launch_env.h) through the same injectable reader as DistributedEnv (distributed_env.h), and
// checked there: a bad value is an Error naming the variable, never a silent default. Layers
// below state/ (comm/'s transports, the checkpoint's messages) get what they need from these
// fields, not from getenv.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "runtime/state/distributed_env.h"

namespace accel {

enum class DebugLevel { Off, Info, Detail };

struct RuntimeSettings {
  // ACCEL_DEBUG (INFO, DETAIL; off or 0: none) and Accelerate's debug mode (`accel launch
  // --debug`: ACCELERATE_DEBUG_MODE), which checks operations across processes as DETAIL does.
  DebugLevel debug = DebugLevel::Off;
  std::chrono::milliseconds collective_timeout;  // ACCEL_COLLECTIVE_TIMEOUT, else the default
  std::string gloo_iface;                        // GLOO_SOCKET_IFNAME
  bool shm = true;                               // ACCEL_SHM (0: Gloo only)
  std::string host_id;                           // ACCEL_HOST_ID (empty: the machine's own)
  std::string machine_name;                      // ACCEL_MACHINE: the launcher's label for this machine
  std::string run_id;                            // ACCEL_RUN_ID, else TORCHELASTIC_RUN_ID
};

RuntimeSettings readRuntimeSettings(const EnvReader& getenv);
RuntimeSettings readRuntimeSettings();  // from this process's environment

}  // namespace accel
