// SPDX-License-Identifier: Apache-2.0
// --mpirun_hostfile (config: mpirun_config.mpirun_hostfile): Accelerate's multi-CPU launch
// through mpirun (prepare_simple_launcher_cmd_env in accelerate/utils/launch.py). This machine
// runs one mpirun, which starts every rank on the hosts of the hostfile; the workers take their
// ranks from mpirun's variables (OMPI_COMM_WORLD_*, PMI_*), which the runtime and Accelerate
// both read. accel supervises mpirun's process tree as it supervises workers: output with a
// prefix, signals forwarded, the tree killed on the way out, its exit code passed through.
#pragma once

#include <string>

#include "lib/launch/launch_plan.h"

namespace accel {

struct Mpirun {
  std::string path;      // mpirun (or mpiexec) found on PATH
  bool open_mpi = true;  // Open MPI's argument names; else Intel MPI / MVAPICH's
  std::string version;   // what `PATH --version` printed
};

// `path --version`'s output, which says which MPI it is. UsageError when it prints nothing.
std::string mpiVersionText(const std::string& path);

// Finds mpirun or mpiexec on `path_env` and asks it which MPI it is. UsageError when none.
Mpirun findMpirun(const std::string& path_env);

// Rewrites the plan's workers into one mpirun that starts them all. `as_root`: Open MPI refuses
// root unless OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) say otherwise (containers run as root).
void runThroughMpirun(LaunchPlan& plan, const Mpirun& mpi, bool as_root);

}  // namespace accel
