// SPDX-License-Identifier: Apache-2.0
// Resolves every setting of a launch and remembers where each came from: an explicit flag beats
// torchrun's PET_* variables and a Kubernetes pod's or SLURM's placement (placement_settings.h),
// which beat the config file, which beats the default. Unlike
// Accelerate's launcher, enable_cpu_affinity applies; a non-static rdzv_backend gets a note.
// Pure: the machine's facts come in as LaunchFacts. Throws UsageError / ConfigError.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/config/config.h"
#include "lib/config/schema.h"
#include "lib/launch/launch_options.h"
#include "lib/launch/launch_settings_record.h"
#include "lib/launch/slurm.h"

namespace accel {

// What this machine says, gathered by the caller.
struct LaunchFacts {
  int visible_gpus = 0;   // after CUDA_VISIBLE_DEVICES
  int physical_gpus = 0;  // in the machine
  std::string gpu_note;   // why there are none, for messages
  int physical_cores = 1;
  std::vector<int> usable_cpus;  // the launcher's CPU affinity (enable_cpu_affinity splits it)
  std::string hostname;
  std::string random_hex;                  // fresh randomness for run ids and folder names (shown)
  std::string token_hex;                   // fresh randomness of its own for tokens (never shown)
  std::map<std::string, std::string> env;  // the launcher's environment
  bool default_config_exists = false;      // the default config file exists (--cpu skips it)
  bool stdin_terminal = false;             // the launcher's stdin is a terminal
  // Whether a host name or address resolves to one of this machine's addresses (a c10d
  // endpoint names machine 0). Unset: it never does.
  std::function<bool(const std::string& host)> names_this_machine;
};

// `config` is the loaded file (nullopt when none was read; `config_path_looked_at` says where).
LaunchSettings resolveLaunchSettings(const LaunchOptions& options, const std::optional<Config>& config,
                                     const std::string& config_path_looked_at, const LaunchFacts& facts);

}  // namespace accel
