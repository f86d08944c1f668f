// SPDX-License-Identifier: Apache-2.0
// Where this machine sits in the job and how many processes it runs, part of
// resolveLaunchSettings (launch_settings.h). Each of num_machines, machine_rank, main_process_ip
// and main_process_port resolves: a hostfile head's orders > a flag (Accelerate's or torchrun's;
// both given and different is a usage error naming both) > torchrun's PET_* > a Kubernetes pod's
// convention > SLURM > the config file > the default, so that an image that ships a
// default_config.yaml does not make every pod machine 0. A c10d endpoint with no node rank makes
// the machine its host names machine 0 and numbers the others as they join (machine_rank -1
// until then).
// This machine's process count (nproc_per_node): the head's; torchrun's --nproc_per_node (N, gpu,
// cpu, auto) or PET_NPROC_PER_NODE; else num_processes (a total, spread over the machines, the
// first ones taking one more where it does not divide); else one per visible GPU (SLURM's count
// in an allocation), one on a CPU machine, one under `accel torchrun`. Each machine may run its
// own count: unless a total was given (world_at_join false), machine 0 learns the layout at the
// join.
#pragma once

#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

// After the paradigm: the placement of `s`, its notes added to `notes`. Throws UsageError naming
// the values that disagree.
Placement resolvePlacement(const LaunchSettings& s, const LaunchOptions& o, const std::optional<Config>& config,
                           const facts::Facts& facts, const HeadPlace* place, std::vector<std::string>& notes);

}  // namespace accel::launch::settings
