// SPDX-License-Identifier: Apache-2.0
// DeepSpeed's MPI launchers (deepspeed_multinode_launcher openmpi, mpich, mvapich, impi): one
// mpirun on this machine starts every rank on the selected hosts, over the same ssh as a
// hostfile launch (--ssh_port, --ssh_args). The ranks take their places from the MPI's variables
// (OMPI_COMM_WORLD_*, PMI_*, MV2_*), which the runtime and Accelerate read, and MASTER_ADDR
// names the first host, where rank 0 hosts the store. GPU jobs too: each rank's local rank picks
// its GPU. The selection becomes the MPI's own hostfile (Open MPI: `HOST slots=N`; the
// Hydra-based MPICH, MVAPICH and Intel MPI: `HOST:N`), in a private temporary file.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/fleet/host_launch.h"
#include "lib/launch/launch_plan.h"
#include "lib/launch/mpirun.h"

namespace accel {

// The MPI `launcher` names, found on `path_env` and recognised by its --version, or UsageError
// naming the package that provides it.
Mpirun findMpiFor(const std::string& launcher, const std::string& path_env);

// The selection as `mpi`'s hostfile text.
std::string mpiHostfileText(const HostLaunch& hosts, const Mpirun& mpi);

// Rewrites the plan's workers into one mpirun over the selection: every slot a rank, the
// hostfile at `hostfile`, ssh with `ssh_words` (port and options), the workers' variables and
// the `forwarded` names exported to every host. Throws UsageError for a filter that picks
// single slots (an MPI places ranks on a host's slots in order) and for ssh options that this
// MPI cannot take.
void runHostsThroughMpirun(LaunchPlan& plan, const Mpirun& mpi, const HostLaunch& hosts, const std::string& hostfile,
                           const std::vector<std::string>& ssh_words, const std::vector<std::string>& forwarded,
                           bool as_root);

}  // namespace accel
