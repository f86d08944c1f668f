// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/mpi_hosts.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/plan/mpirun.h"
#include "lib/launch/plan/worker_env.h"

namespace accel::launch::plan {

namespace {

// An MPI runs a host's ranks on its slots from the first: any other selection cannot apply.
bool singleSlots(const settings::Hosts& h) {
  return std::any_of(h.selected.begin(), h.selected.end(), [](const settings::HostSlots& host) {
    for (size_t i = 0; i < host.slots.size(); ++i) {
      if (host.slots[i] != static_cast<int>(i)) return true;
    }
    return false;
  });
}

// The MPIs take their ssh options as one string they split at blanks again.
void refuseBlanks(const settings::Hosts& h, const std::vector<std::string>& ssh_words) {
  for (const auto& word : ssh_words) {
    if (word.find_first_of(" \t") == std::string::npos) continue;
    throw UsageError(
        fmt::format("{}'s mpirun splits ssh options at blanks, so '{}' cannot reach ssh whole", h.launcher, word),
        "put it in an ssh config file (Host …) and give --ssh_args \"-F FILE\" with a path without "
        "blanks");
  }
}

}  // namespace

std::string mpiHostfileText(const settings::Hosts& h, const facts::Mpi& mpi) {
  std::string out;
  for (const auto& host : h.selected) {
    out += mpi.open_mpi ? fmt::format("{} slots={}\n", host.host, host.slots.size())
                        : fmt::format("{}:{}\n", host.host, host.slots.size());
  }
  return out;
}

WorkerSpec hostsMpirunWorker(const LaunchPlan& draft, const settings::LaunchSettings& s, const facts::Mpi& mpi,
                             const std::string& hostfile, bool as_root) {
  const settings::Hosts& h = s.hosts;
  if (singleSlots(h)) {
    throw UsageError(fmt::format("{} ({}) places ranks on each host's slots from the first, so a filter of single "
                                 "slots cannot apply",
                                 h.launcher, h.launcher_origin.text()),
                     "filter whole hosts (--include node1@node2), or use --num_gpus N, or "
                     "--deepspeed_multinode_launcher pdsh");
  }
  const std::vector<std::string>& ssh_words = h.ssh_options;
  refuseBlanks(h, ssh_words);
  WorkerSpec one = draft.workers.at(0);
  one.own_env = rootPermission(mpi, as_root);
  std::set<std::string> names;
  for (const auto& [name, value] : workerEnvironment(draft, one)) names.insert(name);
  for (const auto& [name, value] : h.forwarded) {  // the job's own variables win
    if (names.insert(name).second) one.own_env.emplace_back(name, value);
  }
  const std::string world = std::to_string(h.slots());
  std::vector<std::string> argv = {mpi.path};
  if (mpi.open_mpi) {
    // --noprefix: an mpirun started by its absolute path would put /usr/bin first on the ranks'
    // PATH (mpirun.h). plm_rsh_args: the same ssh options as a hostfile launch.
    argv.insert(argv.end(), {"--hostfile", hostfile, "-n", world, "--noprefix", "--mca", "plm_rsh_agent", "ssh"});
    if (!ssh_words.empty()) argv.insert(argv.end(), {"--mca", "plm_rsh_args", join(ssh_words, " ")});
    for (const auto& name : names) argv.insert(argv.end(), {"-x", name});
  } else {
    argv.insert(argv.end(), {"-f", hostfile, "-n", world, "-launcher", "ssh"});
    argv.insert(argv.end(), {"-genvlist", join({names.begin(), names.end()}, ",")});
    if (!ssh_words.empty()) {  // Intel MPI's Hydra takes them; MPICH's and MVAPICH's have no such option
      if (h.launcher != "impi") {
        throw UsageError(fmt::format("{}'s mpirun cannot pass --ssh_args/--ssh_port to ssh", h.launcher),
                         "put them in ~/.ssh/config (Host …, Port …, IdentityFile …), which ssh reads for it");
      }
      one.own_env.emplace_back("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", join(ssh_words, " "));
    }
  }
  argv.insert(argv.end(), h.launcher_args.begin(), h.launcher_args.end());  // DeepSpeed's --launcher_args
  argv.insert(argv.end(), one.argv.begin(), one.argv.end());
  one.argv = std::move(argv);
  one.label = "mpirun";
  one.cpus.clear();
  return one;
}

}  // namespace accel::launch::plan
