// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/mpirun.h"

#include <cstdio>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/program.h"

namespace accel {

std::string mpiVersionText(const std::string& path) {
  std::string out;
  if (FILE* pipe = ::popen((shellQuote(path) + " --version 2>&1").c_str(), "r")) {
    char buffer[512];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    ::pclose(pipe);
  }
  if (trim(out).empty()) {
    throw UsageError(fmt::format("'{} --version' printed nothing, so accel cannot tell which MPI it is", path),
                     "check that this mpirun runs (try it by hand), or put a working one first on PATH");
  }
  return out;
}

Mpirun findMpirun(const std::string& path_env) {
  for (const char* name : {"mpirun", "mpiexec"}) {
    std::string path = findExecutable(name, path_env);
    if (path.empty()) continue;
    const std::string version = mpiVersionText(path);
    return {path, version.find("Open MPI") != std::string::npos, version};
  }
  throw UsageError(
      "--mpirun_hostfile needs mpirun or mpiexec on PATH, and neither was found",
      "install Open MPI (Debian: apt install openmpi-bin), Intel MPI or MVAPICH, or drop --mpirun_hostfile");
}

void runThroughMpirun(LaunchPlan& plan, const Mpirun& mpi, bool as_root) {
  const LaunchSettings& s = plan.settings;
  const std::string hostfile = s.text("mpirun_config.mpirun_hostfile");
  if (!s.flag("use_cpu")) {
    throw UsageError("--mpirun_hostfile starts CPU workers through mpirun, but this launch uses GPUs",
                     "add --cpu (Accelerate uses mpirun for multi-CPU jobs only), or drop --mpirun_hostfile");
  }
  if (plan.machine_rank != 0) {
    throw UsageError(
        fmt::format("with --mpirun_hostfile, run accel launch on one machine only (this is machine_rank {})",
                    plan.machine_rank),
        "mpirun starts the ranks on every host of " + hostfile);
  }
  WorkerSpec one = plan.workers.at(0);
  // No RANK / LOCAL_RANK / WORLD_SIZE here (launch_plan.cc: torchrunShaped): mpirun gives each rank
  // its own (OMPI_COMM_WORLD_RANK, …), which the runtime and Accelerate read.
  if (as_root && mpi.open_mpi) {
    one.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
    one.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  const int per_machine = static_cast<int>(plan.workers.size());
  // Accelerate's command: mpirun --hostfile F --npernode N -n WORLD --bind-to socket PROGRAM…
  // (Intel MPI and MVAPICH: -f, -ppn, no binding option).
  std::vector<std::string> argv = {mpi.path,
                                   mpi.open_mpi ? "--hostfile" : "-f",
                                   hostfile,
                                   mpi.open_mpi ? "--npernode" : "-ppn",
                                   std::to_string(per_machine),
                                   "-n",
                                   std::to_string(plan.world_size)};
  if (mpi.open_mpi) {
    // --noprefix: Open MPI takes an mpirun started by its absolute path as --prefix and puts that
    // directory first on the ranks' PATH and LD_LIBRARY_PATH (/usr/bin before a venv's python).
    argv.insert(argv.end(), {"--bind-to", "socket", "--noprefix"});
    for (const auto& [name, value] : one.env) argv.insert(argv.end(), {"-x", name});  // to the other hosts too
  }
  argv.insert(argv.end(), one.argv.begin(), one.argv.end());
  one.argv = std::move(argv);
  one.label = "mpirun";
  one.cpus.clear();  // mpirun binds its ranks itself
  plan.workers = {std::move(one)};
}

}  // namespace accel
