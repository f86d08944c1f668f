// SPDX-License-Identifier: Apache-2.0
// SLURM allocations: where this launcher sits in the job, from the variables srun sets.
// Pure functions over an environment map; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel::launch::settings {

struct SlurmInfo {
  std::string job_id;
  long long node_rank = 0;                // SLURM_NODEID
  long long num_nodes = 1;                // SLURM_STEP_NUM_NODES, else SLURM_NNODES
  std::string first_host;                 // first host of SLURM_STEP_NODELIST / SLURM_JOB_NODELIST
  std::optional<long long> gpus_on_node;  // SLURM_GPUS_ON_NODE
  bool in_step = false;                   // inside srun (SLURM_STEP_ID set), i.e. one launcher per node
};

// nullopt outside an allocation (no SLURM_JOB_ID). Throws UsageError on malformed variables.
std::optional<SlurmInfo> detectSlurm(const std::map<std::string, std::string>& env);

// Expands a SLURM hostlist: "node[01-03,07],gpu-a1" -> node01 node02 node03 node07 gpu-a1.
// Zero padding is kept; several bracket groups in one name multiply out. Throws UsageError for
// malformed text, and for a list of more than 65536 hosts or a name longer than 255 characters
// (checked before expanding: "n[0-999999999]" is an error, not gigabytes of names).
std::vector<std::string> expandHostlist(const std::string& hostlist);

}  // namespace accel::launch::settings
