// SPDX-License-Identifier: Apache-2.0
// --mpirun_hostfile (config: mpirun_config.mpirun_hostfile): Accelerate's multi-CPU launch
// through mpirun (prepare_simple_launcher_cmd_env in accelerate/utils/launch.py). This machine
// runs one mpirun, which starts every rank on the hosts of the hostfile; the workers take their
// ranks from mpirun's variables (OMPI_COMM_WORLD_*, PMI_*), which the runtime and Accelerate
// both read. accel supervises mpirun's process tree as it supervises workers: output with a
// prefix, signals forwarded, the tree killed on the way out, its exit code passed through.
#pragma once

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::plan {

// The one process that replaces `draft`'s workers: mpirun over the hostfile, with the workers'
// variables exported to every rank. `as_root`: Open MPI refuses root unless
// OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) say otherwise (containers run as root). Throws UsageError
// for a GPU job or a machine other than 0.
WorkerSpec mpirunWorker(const LaunchPlan& draft, const settings::LaunchSettings& s, const facts::Mpi& mpi,
                        bool as_root);

// Open MPI's permission to run as root, where it is needed.
Env rootPermission(const facts::Mpi& mpi, bool as_root);

}  // namespace accel::launch::plan
