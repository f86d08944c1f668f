// SPDX-License-Identifier: Apache-2.0
// DeepSpeed's MPI launchers (deepspeed_multinode_launcher openmpi, mpich, mvapich, impi): one
// mpirun on this machine starts every rank on the selected hosts, over the same ssh as a
// hostfile launch (--ssh_port, --ssh_args). The ranks take their places from the MPI's variables
// (OMPI_COMM_WORLD_*, PMI_*, MV2_*), which the runtime and Accelerate read, and MASTER_ADDR
// names the first host, where rank 0 hosts the store. GPU jobs too: each rank's local rank picks
// its GPU. The selection becomes the MPI's own hostfile (Open MPI: `HOST slots=N`; the
// Hydra-based MPICH, MVAPICH and Intel MPI: `HOST:N`), in a private temporary file the launch
// writes before it plans (facts.h).
#pragma once

#include <string>

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::plan {

// The selection as `mpi`'s hostfile text.
std::string mpiHostfileText(const settings::Hosts& hosts, const facts::Mpi& mpi);

// The one process that replaces `draft`'s workers: mpirun over the selection, every slot a
// rank, the hostfile at `hostfile`, ssh with the hosts' options, the workers' variables and the
// forwarded ones exported to every host. Throws UsageError for a filter that picks single slots
// (an MPI places ranks on a host's slots in order) and for ssh options that this MPI cannot take.
WorkerSpec hostsMpirunWorker(const LaunchPlan& draft, const settings::LaunchSettings& s, const facts::Mpi& mpi,
                             const std::string& hostfile, bool as_root);

}  // namespace accel::launch::plan
