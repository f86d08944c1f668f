// SPDX-License-Identifier: Apache-2.0
// What `deepspeed ARGS` (DeepSpeed 0.19's runner.main and launch.py) runs, as the words of the
// `accel launch` that runs the same: so a hostfile head's orders carry them to every host as they
// carry any launch. The resources as DeepSpeed finds them: the hostfile (DeepSpeed's default
// /job/hostfile) when it exists, else this machine's GPUs (its CPU accelerator's count without
// any: LOCAL_SIZE, else the NUMA nodes), with CUDA_VISIBLE_DEVICES turned into --include; then
// --include/--exclude, --num_nodes, --num_gpus. One host (and not --force_multi) runs here;
// several are started by --launcher's way (pdsh: accel's ssh fleet; openmpi, mpich, mvapich,
// impi: mpirun; slurm: srun); --no_ssh runs this node's share as node --node_rank.
// The workers get DeepSpeed's environment (--deepspeed_env) and --local_rank=N (unless
// --no_local_rank). Refused (UsageError) where DeepSpeed refuses, with its reason, and
// --autotuning (DeepSpeed's autotuner is DeepSpeed's).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lib/launch/settings/deepspeed_args.h"

namespace accel::launch::settings {

// The machine as DeepSpeed's runner sees it.
struct DeepSpeedMachine {
  std::map<std::string, std::string> env;
  int gpus = 0;         // visible GPUs
  int cpu_devices = 1;  // DeepSpeed's CPU accelerator's device count: LOCAL_SIZE, else NUMA nodes, else 1
  std::function<bool(const std::string&)> exists;  // a file exists (the hostfile)
};

struct DeepSpeedLaunch {
  std::vector<std::string> words;  // `accel launch` words
  std::vector<std::string> notes;  // what DeepSpeed's runner would log that changes the launch
  std::string save_pid_file;       // --save_pid: /tmp/PID.deepspeed ("" without)
};

DeepSpeedLaunch deepSpeedLaunch(const DeepSpeedArgs& a, const DeepSpeedMachine& m, long pid);

}  // namespace accel::launch::settings
