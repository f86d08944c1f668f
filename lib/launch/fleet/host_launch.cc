// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/host_launch.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

const char* kCli = "command line";
const char* kConfig = "config file";
const char* kDeepSpeedDefaultHostfile = "/job/hostfile";  // DeepSpeed's default

struct Typed {
  std::string value, origin;
};

// A setting given by one of two flags (accel's, Accelerate's) or the config: both flags, different,
// is a usage error naming both.
std::optional<Typed> eitherFlag(const LaunchSettings& s, const LaunchOptions& o, const std::optional<std::string>& own,
                                const char* own_flag, const std::string& key) {
  auto accelerate = o.values.find(key);
  const std::string key_flag = "--" + key.substr(key.find('.') + 1);
  if (own && accelerate != o.values.end() && *own != accelerate->second) {
    throw UsageError(fmt::format("{} {} and {} {} disagree", own_flag, *own, key_flag, accelerate->second),
                     "give one of them");
  }
  if (own) return Typed{*own, own_flag};
  if (accelerate != o.values.end()) return Typed{accelerate->second, key_flag};
  if (s.has(key) && s.value(key).is_string() && !s.text(key).empty() && s.origin(key) == kConfig) {
    return Typed{s.text(key), key + " (config file)"};
  }
  return std::nullopt;
}

// Accelerate's --mpirun_hostfile is its multi-CPU mpirun; beside a DeepSpeed hostfile, which of the
// two starts the hosts is not said.
void refuseBothHostfiles(const LaunchSettings& s, const std::optional<Typed>& file) {
  const std::string key = "mpirun_config.mpirun_hostfile";
  if (!file || !s.has(key) || !s.value(key).is_string()) return;
  throw UsageError(fmt::format("{} {} and mpirun_hostfile {} ({}) both name the hosts", file->origin, file->value,
                               s.text(key), s.origin(key)),
                   "give one: --hostfile (accel starts every host over ssh) or --mpirun_hostfile (Accelerate's "
                   "multi-CPU mpirun)");
}

// One launcher per machine already: torchrun's PET_*, a pod (a SLURM step: refuseInStep).
bool placedElsewhere(const LaunchSettings& s) {
  return startsWith(s.origin("num_machines"), "PET_") || s.has("pod_convention");
}

// Inside a SLURM step every node already runs its launcher, so none starts others; a typed
// hostfile there would be a second way to place the same job.
void refuseInStep(const std::optional<Typed>& file, bool typed_file) {
  if (!typed_file) return;
  throw UsageError(fmt::format("{} {}: this launcher runs inside a SLURM step ({}), where srun starts one launcher "
                               "per node",
                               file->origin, file->value, launch_env::kSlurmStepId),
                   "drop the hostfile (SLURM places the job), or run accel launch --hostfile outside srun");
}

void refuseOutsideAllocation(const HostLaunch& h, const std::map<std::string, std::string>& env) {
  if (env.count(launch_env::kSlurmJobId)) return;
  throw UsageError(fmt::format("{} ({}) starts one launcher per node with srun, inside a SLURM allocation, and this "
                               "is not in one (no {})",
                               h.launcher, h.launcher_origin, launch_env::kSlurmJobId),
                   "run it from `salloc -N N` or an sbatch script, or use --deepspeed_multinode_launcher pdsh with a "
                   "hostfile");
}

std::string multinodeLauncher(const LaunchSettings& s, std::string& origin) {
  const std::string key = "deepspeed_config.deepspeed_multinode_launcher";
  if (s.has(key) && s.value(key).is_string()) {
    origin = s.origin(key) == kCli ? "--deepspeed_multinode_launcher" : key + " (" + s.origin(key) + ")";
    return s.text(key);
  }
  origin = "DeepSpeed's default";
  return "pdsh";
}

void refuseOtherMachine(const LaunchSettings& s, const HostLaunch& h) {
  if (s.integer("machine_rank") == 0) return;
  throw UsageError(
      fmt::format("{} ({}) starts every machine from machine 0, but this is machine_rank {} ({})", h.launcher,
                  h.launcher_origin, s.integer("machine_rank"), s.origin("machine_rank")),
      "run accel launch on machine 0 only, or give --deepspeed_multinode_launcher nossh to run one launcher "
      "per machine yourself");
}

// A count typed as one of two flags (Accelerate's, torchrun's); both, different: a usage error.
std::optional<Typed> typedCount(const std::optional<std::string>& accelerate, const char* accelerate_flag,
                                const std::optional<std::string>& torchrun, const char* torchrun_flag) {
  auto number = [](const std::string& text) { return split(text, ':').front(); };  // torchrun's N:N
  if (accelerate && torchrun && number(*torchrun) != *accelerate) {
    throw UsageError(fmt::format("{} {} and {} {} disagree", accelerate_flag, *accelerate, torchrun_flag, *torchrun),
                     "give one of them");
  }
  if (accelerate) return Typed{*accelerate, accelerate_flag};
  if (torchrun) return Typed{number(*torchrun), torchrun_flag};
  return std::nullopt;
}

std::optional<std::string> valueOf(const LaunchOptions& o, const char* key) {
  auto it = o.values.find(key);
  return it == o.values.end() ? std::nullopt : std::optional<std::string>(it->second);
}

void agree(const std::optional<Typed>& a, const std::optional<long long>& b, const char* b_flag) {
  if (a && b && parseInt(a->value) != *b) {
    throw UsageError(fmt::format("{} {} and {} {} disagree", a->origin, a->value, b_flag, *b), "give one of them");
  }
}

// The machine count and process count the flags or the config state, against the hostfile's.
HostFilter limits(const LaunchSettings& s, const LaunchOptions& o, const HostFilter& given, HostLaunch& h) {
  HostFilter f = given;
  const bool filtered = !f.include.empty() || !f.exclude.empty();
  const auto machines = typedCount(valueOf(o, "num_machines"), "--num_machines", o.nnodes, "--nnodes");
  agree(machines, o.num_nodes, "--num_nodes");
  if (machines && !filtered && !o.num_nodes) {
    f.num_nodes = parseInt(machines->value).value_or(0);
    f.num_nodes_origin = machines->origin;
  }
  if (!machines && !o.num_nodes && !filtered && s.origin("num_machines") == kConfig) {
    f.num_nodes = s.integer("num_machines");
    f.num_nodes_origin = "num_machines (config file)";
    h.notes.push_back(
        fmt::format("num_machines {} (config file): the first {} host(s) of {}", f.num_nodes, f.num_nodes, h.hostfile));
  }
  // A count only: gpu, cpu and auto say each host's own, which its slots already are.
  const auto per_host = o.nproc_per_node && parseInt(*o.nproc_per_node)
                            ? std::optional<Typed>(Typed{*o.nproc_per_node, "--nproc_per_node"})
                            : std::nullopt;
  agree(per_host, o.num_gpus, "--num_gpus");
  if (per_host && !o.num_gpus && !filtered) {
    f.num_gpus = parseInt(per_host->value).value_or(0);
    f.num_gpus_origin = per_host->origin;
  }
  const bool total_typed = o.values.count("num_processes") > 0;
  if (!total_typed && !o.nproc_per_node && !o.num_gpus && !filtered && s.origin("num_processes") == kConfig &&
      s.integer("num_machines") > 0 && s.integer("num_processes") >= s.integer("num_machines")) {
    // Accelerate gives DeepSpeed --num_gpus num_processes // num_machines.
    f.num_gpus = s.integer("num_processes") / s.integer("num_machines");
    f.num_gpus_origin = "num_processes / num_machines (config file)";
  }
  return f;
}

// What the flags say of the whole job, against the selection.
void checkSelection(const LaunchOptions& o, const HostLaunch& h) {
  const auto machines = typedCount(valueOf(o, "num_machines"), "--num_machines", o.nnodes, "--nnodes");
  if (machines && parseInt(machines->value) != static_cast<long long>(h.hosts.size())) {
    throw UsageError(fmt::format("{} {} and the hostfile's selection ({} host(s) of {}) disagree", machines->origin,
                                 machines->value, h.hosts.size(), h.hostfile),
                     "drop it (the hostfile and the filters say the machines), or change the filters");
  }
  if (o.values.count("gpu_ids")) {
    throw UsageError(
        fmt::format("--gpu_ids {} and the hostfile {} both choose GPUs", o.values.at("gpu_ids"), h.hostfile),
        "drop --gpu_ids: each host runs on its slots, which --include HOST:0,1 picks");
  }
  if (h.main_port == 0) {
    throw UsageError(
        "main_process_port 0 (pick a free port) cannot work across machines: the others cannot know "
        "which port was picked",
        "give a port, e.g. --main_process_port 29500");
  }
}

void checkTotal(const LaunchOptions& o, const HostLaunch& h) {
  auto typed = o.values.find("num_processes");
  if (typed == o.values.end()) return;
  const auto want = parseInt(typed->second);
  if (want && *want == slotCount(h)) return;
  std::vector<std::string> each;
  for (const auto& host : h.hosts) each.push_back(fmt::format("{} {}", host.host, host.slots.size()));
  throw UsageError(fmt::format("--num_processes {} and the hostfile's selection ({}: {}) disagree", typed->second,
                               h.hostfile, join(each, ", ")),
                   "drop --num_processes (the hostfile's slots say each host's processes), or change the hostfile "
                   "or the filters");
}

void selectFromHostfile(const LaunchSettings& s, const LaunchOptions& o, HostLaunch& h) {
  HostFilter f;
  if (auto inc = eitherFlag(s, o, o.include, "--include", "deepspeed_config.deepspeed_inclusion_filter")) {
    f.include = inc->value;
    f.include_origin = inc->origin;
  }
  if (auto exc = eitherFlag(s, o, o.exclude, "--exclude", "deepspeed_config.deepspeed_exclusion_filter")) {
    f.exclude = exc->value;
    f.exclude_origin = exc->origin;
  }
  if (o.num_nodes) f.num_nodes = *o.num_nodes;
  if (o.num_gpus) f.num_gpus = *o.num_gpus;
  f = limits(s, o, f, h);
  h.hosts = selectHosts(readHostfile(h.hostfile, h.hostfile_origin), f);
  checkTotal(o, h);
}

void placeMain(const LaunchSettings& s, HostLaunch& h) {
  const bool given = s.has("main_process_ip") && s.value("main_process_ip").is_string() &&
                     !s.text("main_process_ip").empty() && s.origin("main_process_ip") != "default";
  h.main_addr = given ? s.text("main_process_ip") : h.hosts.front().host;  // DeepSpeed: the first host
  h.main_given = given;
  h.main_port = static_cast<int>(s.integer("main_process_port"));
}

// Accelerate's standard runs torchrun on each machine and reads no hostfile: only a typed one
// makes it start the hosts.
HostLaunch::How howOf(const std::string& launcher, bool typed_hostfile) {
  if (launcher == "nossh" || (launcher == "standard" && !typed_hostfile)) return HostLaunch::How::None;
  if (launcher == "slurm") return HostLaunch::How::Srun;
  if (launcher == "openmpi" || launcher == "mpich" || launcher == "mvapich" || launcher == "impi")
    return HostLaunch::How::Mpi;
  return HostLaunch::How::Ssh;  // pdsh, standard with a hostfile
}

}  // namespace

int slotCount(const HostLaunch& h) {
  int n = 0;
  for (const auto& host : h.hosts) n += static_cast<int>(host.slots.size());
  return n;
}

HostLaunch planHostLaunch(const LaunchSettings& s, const LaunchOptions& o,
                          const std::map<std::string, std::string>& env) {
  HostLaunch h;
  if (o.from_head || o.torchrun) return h;
  const auto file = eitherFlag(s, o, o.hostfile, "--hostfile", "deepspeed_config.deepspeed_hostfile");
  // accel's --hostfile starts the hosts in any job; Accelerate's --deepspeed_hostfile, as the
  // config's key, only in a DeepSpeed job of several machines (Accelerate ignores it otherwise).
  const bool typed_file = o.hostfile.has_value();
  if (env.count(launch_env::kSlurmStepId)) {
    refuseInStep(file, typed_file);  // srun started one launcher per node: this is one of them
    return h;
  }
  if (placedElsewhere(s)) return h;
  const bool deepspeed = s.text("distributed_type") == "DEEPSPEED";
  if (!typed_file && !(deepspeed && s.integer("num_machines") > 1)) return h;
  h.launcher = deepspeed ? multinodeLauncher(s, h.launcher_origin) : "ssh";
  if (!deepspeed) h.launcher_origin = "--hostfile";
  h.how = howOf(h.launcher, typed_file);
  refuseBothHostfiles(s, file);
  if (h.how == HostLaunch::How::None) {
    if (file)
      h.notes.push_back(
          fmt::format("{} ({}): one launcher per machine, {} unused", h.launcher, h.launcher_origin, file->value));
    return h;
  }
  if (h.how == HostLaunch::How::Srun) {
    refuseOutsideAllocation(h, env);
    return h;
  }
  refuseOtherMachine(s, h);
  if (file) {
    h.hostfile = file->value;
    h.hostfile_origin = file->origin;
  } else {
    struct stat st {};
    if (::stat(kDeepSpeedDefaultHostfile, &st) != 0) {
      throw UsageError(fmt::format("{} ({}) starts every machine from a hostfile, and none was given ({} does not "
                                   "exist)",
                                   h.launcher, h.launcher_origin, kDeepSpeedDefaultHostfile),
                       "give --hostfile FILE (lines `HOST slots=N`) or deepspeed_hostfile in the config, or "
                       "--deepspeed_multinode_launcher nossh to run accel launch on every machine yourself");
    }
    h.hostfile = kDeepSpeedDefaultHostfile;
    h.hostfile_origin = "DeepSpeed's default hostfile";
  }
  selectFromHostfile(s, o, h);
  placeMain(s, h);
  checkSelection(o, h);
  return h;
}

}  // namespace accel
