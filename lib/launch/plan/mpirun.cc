// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/mpirun.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/plan/worker_env.h"

namespace accel::launch::plan {

Env rootPermission(const facts::Mpi& mpi, bool as_root) {
  if (!as_root || !mpi.open_mpi) return {};
  return {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
}

WorkerSpec mpirunWorker(const LaunchPlan& draft, const settings::LaunchSettings& s, const facts::Mpi& mpi,
                        bool as_root) {
  const std::string hostfile = s.keys.text("mpirun_config.mpirun_hostfile");
  if (!s.paradigm.use_cpu.value) {
    throw UsageError("--mpirun_hostfile starts CPU workers through mpirun, but this launch uses GPUs",
                     "add --cpu (Accelerate uses mpirun for multi-CPU jobs only), or drop --mpirun_hostfile");
  }
  if (draft.machine_rank != 0) {
    throw UsageError(
        fmt::format("with --mpirun_hostfile, run accel launch on one machine only (this is machine_rank {})",
                    draft.machine_rank),
        "mpirun starts the ranks on every host of " + hostfile);
  }
  // No RANK / LOCAL_RANK / WORLD_SIZE here (the plan's torchrun_env is off): mpirun gives each
  // rank its own (OMPI_COMM_WORLD_RANK, …), which the runtime and Accelerate read.
  WorkerSpec one = draft.workers.at(0);
  one.own_env = rootPermission(mpi, as_root);
  const int per_machine = static_cast<int>(draft.workers.size());
  // Accelerate's command: mpirun --hostfile F --npernode N -n WORLD --bind-to socket PROGRAM…
  // (Intel MPI and MVAPICH: -f, -ppn, no binding option).
  std::vector<std::string> argv = {mpi.path,
                                   mpi.open_mpi ? "--hostfile" : "-f",
                                   hostfile,
                                   mpi.open_mpi ? "--npernode" : "-ppn",
                                   std::to_string(per_machine),
                                   "-n",
                                   std::to_string(draft.world_size)};
  if (mpi.open_mpi) {
    // --noprefix: Open MPI takes an mpirun started by its absolute path as --prefix and puts that
    // directory first on the ranks' PATH and LD_LIBRARY_PATH (/usr/bin before a venv's python).
    argv.insert(argv.end(), {"--bind-to", "socket", "--noprefix"});
    for (const auto& [name, value] : workerEnvironment(draft, one)) argv.insert(argv.end(), {"-x", name});
  }
  argv.insert(argv.end(), one.argv.begin(), one.argv.end());
  one.argv = std::move(argv);
  one.label = "mpirun";
  one.cpus.clear();  // mpirun binds its ranks itself
  return one;
}

}  // namespace accel::launch::plan
