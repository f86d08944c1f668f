// SPDX-License-Identifier: Apache-2.0
// What a launch refuses before its plan is built (launch_plan.h): each throws UsageError naming
// the value, where it came from (flag, config, default) and a fix.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

// Counts no launch can mean: more than the store serves (2^20 ranks) or one launcher supervises
// (4096 workers). First, so that every count below fits an int.
void checkSizes(const settings::LaunchSettings& s);
// Processes and machines that do not divide, a machine_rank outside the job, --multi_gpu with one
// process, gpu_ids naming GPUs that do not exist, more processes per machine than GPUs (except
// under `accel torchrun`, which, as torchrun, lets processes share a GPU).
void checkCounts(const settings::LaunchSettings& s, const facts::Machine& facts);
// --nnodes MIN:MAX (machines that come and go, spares) with a launch that starts every machine
// at once and ends them together: a hostfile over ssh, mpirun, or srun for DeepSpeed's slurm
// launcher. Names the way that works: one `accel launch` per machine with a c10d endpoint.
void checkMembership(const settings::LaunchSettings& s);
// FSDP's CPU-RAM-efficient loading without synced module states, as Accelerate refuses it.
void checkFsdp(const settings::LaunchSettings& s);
// A ParallelismConfig whose sizes Accelerate's workers would refuse for `world_size`
// (config/parallelism_sizes.h): a warning in `notes`, since a script may build its own; an
// error under --dry_run.
void checkParallelism(const settings::LaunchSettings& s, long long world_size, std::vector<std::string>& notes);

}  // namespace accel::launch::plan
