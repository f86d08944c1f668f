// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/mpi_hosts.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/program.h"

namespace accel {

namespace {

struct MpiFamily {
  const char* launcher;
  const char* says;                   // in its --version
  std::vector<const char*> programs;  // looked for on PATH, in order
  const char* package;
};

const std::vector<MpiFamily>& families() {
  static const std::vector<MpiFamily> all = {
      {"openmpi", "Open MPI", {"mpirun.openmpi", "mpirun", "mpiexec"}, "Open MPI (Debian: apt install openmpi-bin)"},
      {"mpich",
       "HYDRA",
       {"mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra", "mpirun", "mpiexec"},
       "MPICH (Debian: apt install mpich)"},
      {"mvapich",
       "MVAPICH",
       {"mpirun", "mpiexec"},
       "MVAPICH2 (not packaged by Debian: https://mvapich.cse.ohio-state.edu)"},
      {"impi", "Intel(R) MPI", {"mpirun", "mpiexec.hydra", "mpiexec"}, "Intel MPI (Intel oneAPI HPC Toolkit)"},
  };
  return all;
}

// An MPI runs a host's ranks on its slots from the first: any other selection cannot apply.
bool singleSlots(const HostLaunch& h) {
  return std::any_of(h.hosts.begin(), h.hosts.end(), [](const HostSlots& host) {
    for (size_t i = 0; i < host.slots.size(); ++i) {
      if (host.slots[i] != static_cast<int>(i)) return true;
    }
    return false;
  });
}

// The MPIs take their ssh options as one string they split at blanks again.
void refuseBlanks(const HostLaunch& h, const std::vector<std::string>& ssh_words) {
  for (const auto& word : ssh_words) {
    if (word.find_first_of(" \t") == std::string::npos) continue;
    throw UsageError(
        fmt::format("{}'s mpirun splits ssh options at blanks, so '{}' cannot reach ssh whole", h.launcher, word),
        "put it in an ssh config file (Host …) and give --ssh_args \"-F FILE\" with a path without "
        "blanks");
  }
}

}  // namespace

Mpirun findMpiFor(const std::string& launcher, const std::string& path_env) {
  for (const auto& family : families()) {
    if (launcher != family.launcher) continue;
    std::vector<std::string> seen;
    for (const char* name : family.programs) {
      const std::string path = findExecutable(name, path_env);
      if (path.empty()) continue;
      const std::string version = mpiVersionText(path);
      if (version.find(family.says) != std::string::npos) {
        return {path, launcher == "openmpi", version};
      }
      seen.push_back(fmt::format("{} ({})", path, trim(split(version, '\n').front())));
    }
    throw UsageError(fmt::format("deepspeed_multinode_launcher {} needs its mpirun, and none is on PATH{}", launcher,
                                 seen.empty() ? "" : " (found only " + join(seen, ", ") + ")"),
                     fmt::format("install {}, or choose another deepspeed_multinode_launcher (pdsh: accel's own ssh)",
                                 family.package));
  }
  throw UsageError(fmt::format("deepspeed_multinode_launcher {} is not an MPI launcher", launcher));
}

std::string mpiHostfileText(const HostLaunch& h, const Mpirun& mpi) {
  std::string out;
  for (const auto& host : h.hosts) {
    out += mpi.open_mpi ? fmt::format("{} slots={}\n", host.host, host.slots.size())
                        : fmt::format("{}:{}\n", host.host, host.slots.size());
  }
  return out;
}

void runHostsThroughMpirun(LaunchPlan& plan, const Mpirun& mpi, const HostLaunch& h, const std::string& hostfile,
                           const std::vector<std::string>& ssh_words, const std::vector<std::string>& forwarded,
                           bool as_root) {
  if (singleSlots(h)) {
    throw UsageError(fmt::format("{} ({}) places ranks on each host's slots from the first, so a filter of single "
                                 "slots cannot apply",
                                 h.launcher, h.launcher_origin),
                     "filter whole hosts (--include node1@node2), or use --num_gpus N, or "
                     "--deepspeed_multinode_launcher pdsh");
  }
  refuseBlanks(h, ssh_words);
  WorkerSpec one = plan.workers.at(0);
  for (auto& [name, value] : one.env) {
    if (name == launch_env::kMasterAddr) value = h.main_addr;  // the first host: rank 0's store
  }
  if (as_root && mpi.open_mpi) {
    one.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
    one.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  const std::string world = std::to_string(slotCount(h));
  std::vector<std::string> argv = {mpi.path};
  if (mpi.open_mpi) {
    // --noprefix: an mpirun started by its absolute path would put /usr/bin first on the ranks'
    // PATH (mpirun.h). plm_rsh_args: the same ssh options as a hostfile launch.
    argv.insert(argv.end(), {"--hostfile", hostfile, "-n", world, "--noprefix", "--mca", "plm_rsh_agent", "ssh"});
    if (!ssh_words.empty()) argv.insert(argv.end(), {"--mca", "plm_rsh_args", join(ssh_words, " ")});
    std::set<std::string> names;
    for (const auto& [name, value] : one.env) names.insert(name);
    names.insert(forwarded.begin(), forwarded.end());
    for (const auto& name : names) argv.insert(argv.end(), {"-x", name});
  } else {
    argv.insert(argv.end(), {"-f", hostfile, "-n", world, "-launcher", "ssh"});
    std::set<std::string> names(forwarded.begin(), forwarded.end());
    for (const auto& [name, value] : one.env) names.insert(name);
    argv.insert(argv.end(), {"-genvlist", join({names.begin(), names.end()}, ",")});
    if (!ssh_words.empty()) {  // Intel MPI's Hydra takes them; MPICH's and MVAPICH's have no such option
      if (h.launcher != "impi") {
        throw UsageError(fmt::format("{}'s mpirun cannot pass --ssh_args/--ssh_port to ssh", h.launcher),
                         "put them in ~/.ssh/config (Host …, Port …, IdentityFile …), which ssh reads for it");
      }
      one.env.emplace_back("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", join(ssh_words, " "));
    }
  }
  argv.insert(argv.end(), one.argv.begin(), one.argv.end());
  one.argv = std::move(argv);
  one.label = "mpirun";
  one.cpus.clear();
  plan.workers = {std::move(one)};
}

}  // namespace accel
