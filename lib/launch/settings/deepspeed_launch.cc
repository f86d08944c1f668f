// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/deepspeed_launch.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/settings/hostfile.h"

namespace accel::launch::settings {

namespace {

constexpr const char* kDefaultHostfile = "/job/hostfile";  // DeepSpeed's DLTS_HOSTFILE

std::string slotList(const std::vector<int>& slots) {
  std::vector<std::string> out;
  for (int s : slots) out.push_back(std::to_string(s));
  return join(out, ",");
}

void refuse(const DeepSpeedArgs& a) {
  if (!a.autotuning.empty()) {
    throw UsageError(fmt::format("--autotuning {}: accel does not run DeepSpeed's autotuner", a.autotuning),
                     "tune with DeepSpeed's own `deepspeed --autotuning tune …`, then launch the configuration it "
                     "writes with accel deepspeed");
  }
  if ((a.num_nodes >= 0 || a.num_gpus >= 0) && (!a.include.empty() || !a.exclude.empty())) {
    throw UsageError("Cannot specify num_nodes/gpus with include/exclude",
                     "choose hosts and slots with --include/--exclude, or counts with --num_nodes/--num_gpus");
  }
  if (a.module && a.no_python) {
    throw UsageError("Don't use both the '--no_python' flag and the '--module' flag at the same time.");
  }
}

// The launch's tail, common to every shape: DeepSpeed's worker conventions and the program.
void tail(const DeepSpeedArgs& a, std::vector<std::string>& w, std::vector<std::string>& notes) {
  w.push_back("--deepspeed_env");
  if (!a.no_local_rank) w.push_back("--local_rank_arg");
  if (a.module) w.push_back("--module");
  if (a.no_python) w.push_back("--no_python");
  if (a.bind_cores_to_rank) w.push_back("--bind_cores_to_rank");
  if (a.bind_core_list) w.insert(w.end(), {"--bind_core_list", *a.bind_core_list});
  if (a.quiet || a.log_level == "error" || a.log_level == "critical") w.push_back("--quiet");
  if (a.enable_each_rank_log != "None") w.insert(w.end(), {"--enable_each_rank_log", a.enable_each_rank_log});
  if (a.no_ssh_check) notes.push_back("--no_ssh_check: accel checks no host with ssh before it starts them");
  w.push_back("--");
  w.insert(w.end(), a.command.begin(), a.command.end());
}

}  // namespace

DeepSpeedLaunch deepSpeedLaunch(const DeepSpeedArgs& a_in, const DeepSpeedMachine& m, long pid) {
  DeepSpeedArgs a = a_in;
  DeepSpeedLaunch out;
  refuse(a);
  const std::string hostfile = a.hostfile.value_or(kDefaultHostfile);
  const bool have_hostfile = m.exists(hostfile);
  if (!have_hostfile && a.hostfile) {
    out.notes.push_back(fmt::format("no hostfile at {}: this machine's resources only, as DeepSpeed does", hostfile));
  }
  std::vector<HostSlots> pool;
  if (have_hostfile) {
    pool = readHostfile(hostfile, "--hostfile");
  } else {
    auto cvd = m.env.find(launch_env::kCudaVisibleDevices);
    if (cvd != m.env.end() && !cvd->second.empty()) {
      if (!a.include.empty() || !a.exclude.empty() || a.num_nodes > 1 || a.num_gpus > 0) {
        out.notes.push_back(
            fmt::format("CUDA_VISIBLE_DEVICES={} ignored beside --include/--exclude/--num_gpus/"
                        "--num_nodes, as DeepSpeed ignores it",
                        cvd->second));
      } else {
        a.include = "localhost:" + cvd->second;
        out.notes.push_back(
            fmt::format("CUDA_VISIBLE_DEVICES={}: --include={}, as DeepSpeed sets it", cvd->second, a.include));
      }
    }
    if (a.num_nodes > 1) throw UsageError("Num nodes is >1 but no extra nodes available via hostfile");
    // DeepSpeed gives localhost --num_gpus slots whatever the device count.
    const int devices = m.gpus > 0 ? m.gpus : m.cpu_devices;
    const int count = a.num_gpus > 0 ? static_cast<int>(a.num_gpus) : devices;
    std::vector<int> slots;
    for (int i = 0; i < count; ++i) slots.push_back(i);
    pool = {{"localhost", slots, 0}};
    a.num_gpus = -1;
    a.master_addr = "127.0.0.1";  // DeepSpeed's, whatever --master_addr said
  }
  HostFilter filter;
  filter.include = a.include;
  filter.exclude = a.exclude;
  filter.num_nodes = a.num_nodes > 0 ? a.num_nodes : -1;
  filter.num_gpus = a.num_gpus > 0 ? a.num_gpus : -1;
  const std::vector<HostSlots> active = selectHosts(pool, filter);
  const bool multi = (a.force_multi || active.size() > 1) && !a.no_ssh;
  if (a.save_pid) out.save_pid_file = fmt::format("/tmp/{}.deepspeed", pid);
  std::vector<std::string>& w = out.words;
  const std::string port = std::to_string(a.master_port);
  if (multi) {
    if (!have_hostfile) {
      throw UsageError("--force_multi starts the hosts of a hostfile, and there is none at " + hostfile,
                       "give --hostfile FILE, or drop --force_multi to run on this machine");
    }
    w = {"--use_deepspeed",
         "--deepspeed_multinode_launcher",
         toLower(a.launcher),
         "--hostfile",
         hostfile,
         "--main_process_port",
         port};
    if (!a.include.empty()) w.insert(w.end(), {"--include", a.include});
    if (!a.exclude.empty()) w.insert(w.end(), {"--exclude", a.exclude});
    if (a.num_nodes > 0) w.insert(w.end(), {"--num_nodes", std::to_string(a.num_nodes)});
    if (a.num_gpus > 0) w.insert(w.end(), {"--num_gpus", std::to_string(a.num_gpus)});
    if (!a.master_addr.empty()) w.insert(w.end(), {"--main_process_ip", a.master_addr});
    if (a.ssh_port) w.insert(w.end(), {"--ssh_port", std::to_string(*a.ssh_port)});
    if (!a.launcher_args.empty()) w.insert(w.end(), {"--launcher_args", a.launcher_args});
    if (a.venv_script) w.insert(w.end(), {"--venv_script", *a.venv_script});
  } else if (a.no_ssh) {
    if (a.node_rank < 0 || a.node_rank >= static_cast<long long>(active.size())) {
      throw UsageError(
          "Launching training without ssh, but --node_rank is not set correctly.",
          fmt::format("--node_rank is this node's index among the {} host(s) selected, from 0", active.size()));
    }
    const HostSlots& here = active[static_cast<size_t>(a.node_rank)];
    const std::string addr = !a.master_addr.empty() ? a.master_addr : active.front().host;
    w = {"--nnodes",         std::to_string(active.size()),
         "--node_rank",      std::to_string(a.node_rank),
         "--nproc_per_node", std::to_string(here.slots.size()),
         "--gpu_ids",        slotList(here.slots),
         "--master_addr",    addr,
         "--master_port",    port};
  } else {
    const HostSlots& here = active.front();
    const std::string addr = !a.master_addr.empty() ? a.master_addr : here.host;
    w = {"--num_machines",      "1",
         "--num_processes",     std::to_string(here.slots.size()),
         "--gpu_ids",           slotList(here.slots),
         "--main_process_ip",   addr,
         "--main_process_port", port};
  }
  tail(a, w, out.notes);
  return out;
}

}  // namespace accel::launch::settings
