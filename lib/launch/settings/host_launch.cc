// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/host_launch.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/settings/host_environment.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

namespace {

const char* kDeepSpeedDefaultHostfile = "/job/hostfile";  // DeepSpeed's default

struct Typed {
  std::string value;
  Origin origin;
};

// The text a flag gave config key `key`, as typed (numbers and switches as JSON).
std::optional<std::string> typedText(const LaunchOptions& o, const std::string& key) {
  auto it = o.values.find(key);
  if (it == o.values.end()) return std::nullopt;
  return it->second.is_string() ? it->second.get<std::string>() : it->second.dump();
}

// A setting given by one of two flags (accel's, Accelerate's) or the config: both flags, different,
// is a usage error naming both.
std::optional<Typed> eitherFlag(const LaunchSettings& s, const LaunchOptions& o, const std::optional<std::string>& own,
                                const char* own_flag, const std::string& key) {
  const auto accelerate = typedText(o, key);
  const std::string key_flag = "--" + key.substr(key.find('.') + 1);
  if (own && accelerate && *own != *accelerate) {
    throw UsageError(fmt::format("{} {} and {} {} disagree", own_flag, *own, key_flag, *accelerate),
                     "give one of them");
  }
  if (own) return Typed{*own, fromCommandLine(own_flag)};
  if (accelerate) return Typed{*accelerate, fromCommandLine(key_flag)};
  if (s.keys.value(key).is_string() && !s.keys.text(key).empty() && s.keys.origin(key).source == Source::ConfigFile) {
    return Typed{s.keys.text(key), fromConfigFile(key + " (config file)")};
  }
  return std::nullopt;
}

// Accelerate's --mpirun_hostfile is its multi-CPU mpirun; beside a DeepSpeed hostfile, which of the
// two starts the hosts is not said.
void refuseBothHostfiles(const LaunchSettings& s, const std::optional<Typed>& file) {
  const std::string key = "mpirun_config.mpirun_hostfile";
  if (!file || !s.keys.value(key).is_string()) return;
  throw UsageError(fmt::format("{} {} and mpirun_hostfile {} ({}) both name the hosts", file->origin.text(),
                               file->value, s.keys.text(key), s.keys.origin(key).text()),
                   "give one: --hostfile (accel starts every host over ssh) or --mpirun_hostfile (Accelerate's "
                   "multi-CPU mpirun)");
}

// One launcher per machine already: torchrun's PET_*, a pod (a SLURM step: refuseInStep).
bool placedElsewhere(const LaunchSettings& s) {
  return s.placement.num_machines.origin.source == Source::Torchrun || s.placement.pod.has_value();
}

// Inside a SLURM step every node already runs its launcher, so none starts others; a typed
// hostfile there would be a second way to place the same job.
void refuseInStep(const std::optional<Typed>& file, bool typed_file) {
  if (!typed_file) return;
  throw UsageError(fmt::format("{} {}: this launcher runs inside a SLURM step ({}), where srun starts one launcher "
                               "per node",
                               file->origin.text(), file->value, env::kSlurmStepId.name()),
                   "drop the hostfile (SLURM places the job), or run accel launch --hostfile outside srun");
}

void refuseOutsideAllocation(const Hosts& h, const std::map<std::string, std::string>& vars) {
  if (env::kSlurmJobId.setIn(vars)) return;
  throw UsageError(fmt::format("{} ({}) starts one launcher per node with srun, inside a SLURM allocation, and this "
                               "is not in one (no {})",
                               h.launcher, h.launcher_origin.text(), env::kSlurmJobId.name()),
                   "run it from `salloc -N N` or an sbatch script, or use --deepspeed_multinode_launcher pdsh with a "
                   "hostfile");
}

// srun picks nodes, not GPUs: a filter's slots, --num_gpus and --num_nodes cannot pass.
void refuseSlotsForSrun(const Hosts& h, const LaunchOptions& o) {
  const bool slots = (o.include && o.include->find(':') != std::string::npos) ||
                     (o.exclude && o.exclude->find(':') != std::string::npos);
  if (!slots && !o.num_gpus && !o.num_nodes) return;
  throw UsageError(fmt::format("{} ({}) gives srun whole nodes: {} cannot apply", h.launcher, h.launcher_origin.text(),
                               slots        ? "a filter's slots (HOST:0,1)"
                               : o.num_gpus ? "--num_gpus"
                                            : "--num_nodes"),
                   "filter whole nodes (--include h1@h2, --exclude h3), or ask SLURM for the GPUs (--gpus-per-node)");
}

std::string multinodeLauncher(const LaunchSettings& s, Origin& origin) {
  const std::string key = "deepspeed_config.deepspeed_multinode_launcher";
  if (s.keys.value(key).is_string()) {
    const Origin& o = s.keys.origin(key);
    origin = o.source == Source::CommandLine ? fromCommandLine("--deepspeed_multinode_launcher")
                                             : Origin{o.source, key + " (" + o.text() + ")"};
    return s.keys.text(key);
  }
  origin = {Source::Default, "DeepSpeed's default"};
  return "pdsh";
}

void refuseOtherMachine(const LaunchSettings& s, const Hosts& h) {
  const auto& rank = s.placement.machine_rank;
  if (rank.value == 0) return;
  throw UsageError(
      fmt::format("{} ({}) starts every machine from machine 0, but this is machine_rank {} ({})", h.launcher,
                  h.launcher_origin.text(), rank.value, rank.origin.text()),
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
  if (accelerate) return Typed{*accelerate, fromCommandLine(accelerate_flag)};
  if (torchrun) return Typed{number(*torchrun), fromCommandLine(torchrun_flag)};
  return std::nullopt;
}

void agree(const std::optional<Typed>& a, const std::optional<long long>& b, const char* b_flag) {
  if (a && b && parseInt(a->value) != *b) {
    throw UsageError(fmt::format("{} {} and {} {} disagree", a->origin.text(), a->value, b_flag, *b),
                     "give one of them");
  }
}

// The machine count and process count the flags or the config state, against the hostfile's.
HostFilter limits(const LaunchSettings& s, const LaunchOptions& o, const HostFilter& given, Hosts& h) {
  HostFilter f = given;
  const bool filtered = !f.include.empty() || !f.exclude.empty();
  const auto machines = typedCount(typedText(o, "num_machines"), "--num_machines", o.nnodes, "--nnodes");
  agree(machines, o.num_nodes, "--num_nodes");
  if (machines && !filtered && !o.num_nodes) {
    f.num_nodes = parseInt(machines->value).value_or(0);
    f.num_nodes_origin = machines->origin.text();
  }
  const Placement& p = s.placement;
  if (!machines && !o.num_nodes && !filtered && p.num_machines.origin.source == Source::ConfigFile) {
    f.num_nodes = p.num_machines.value;
    f.num_nodes_origin = "num_machines (config file)";
    h.notes.push_back(
        fmt::format("num_machines {} (config file): the first {} host(s) of {}", f.num_nodes, f.num_nodes, h.hostfile));
  }
  // A count only: gpu, cpu and auto say each host's own, which its slots already are.
  const auto per_host = o.nproc_per_node && parseInt(*o.nproc_per_node)
                            ? std::optional<Typed>(Typed{*o.nproc_per_node, fromCommandLine("--nproc_per_node")})
                            : std::nullopt;
  agree(per_host, o.num_gpus, "--num_gpus");
  if (per_host && !o.num_gpus && !filtered) {
    f.num_gpus = parseInt(per_host->value).value_or(0);
    f.num_gpus_origin = per_host->origin.text();
  }
  const bool total_typed = o.values.count("num_processes") > 0;
  if (!total_typed && !o.nproc_per_node && !o.num_gpus && !filtered &&
      p.num_processes.origin.source == Source::ConfigFile && p.num_machines.value > 0 &&
      p.num_processes.value >= p.num_machines.value) {
    // Accelerate gives DeepSpeed --num_gpus num_processes // num_machines.
    f.num_gpus = p.num_processes.value / p.num_machines.value;
    f.num_gpus_origin = "num_processes / num_machines (config file)";
  }
  return f;
}

// What the flags say of the whole job, against the selection.
void checkSelection(const LaunchSettings& s, const LaunchOptions& o, const Hosts& h) {
  const auto machines = typedCount(typedText(o, "num_machines"), "--num_machines", o.nnodes, "--nnodes");
  if (machines && parseInt(machines->value) != static_cast<long long>(h.selected.size())) {
    throw UsageError(fmt::format("{} {} and the hostfile's selection ({} host(s) of {}) disagree",
                                 machines->origin.text(), machines->value, h.selected.size(), h.hostfile),
                     "drop it (the hostfile and the filters say the machines), or change the filters");
  }
  if (const auto ids = typedText(o, "gpu_ids")) {
    throw UsageError(fmt::format("--gpu_ids {} and the hostfile {} both choose GPUs", *ids, h.hostfile),
                     "drop --gpu_ids: each host runs on its slots, which --include HOST:0,1 picks");
  }
  if (s.placement.main_process_port.value == 0) {
    throw UsageError(
        "main_process_port 0 (pick a free port) cannot work across machines: the others cannot know "
        "which port was picked",
        "give a port, e.g. --main_process_port 29500");
  }
}

void checkTotal(const LaunchOptions& o, const Hosts& h) {
  const auto typed = typedText(o, "num_processes");
  if (!typed) return;
  const auto want = parseInt(*typed);
  if (want && *want == h.slots()) return;
  std::vector<std::string> each;
  for (const auto& host : h.selected) each.push_back(fmt::format("{} {}", host.host, host.slots.size()));
  throw UsageError(fmt::format("--num_processes {} and the hostfile's selection ({}: {}) disagree", *typed, h.hostfile,
                               join(each, ", ")),
                   "drop --num_processes (the hostfile's slots say each host's processes), or change the hostfile "
                   "or the filters");
}

void selectFromHostfile(const LaunchSettings& s, const LaunchOptions& o, Hosts& h) {
  HostFilter f;
  if (auto inc = eitherFlag(s, o, o.include, "--include", "deepspeed_config.deepspeed_inclusion_filter")) {
    f.include = inc->value;
    f.include_origin = inc->origin.text();
  }
  if (auto exc = eitherFlag(s, o, o.exclude, "--exclude", "deepspeed_config.deepspeed_exclusion_filter")) {
    f.exclude = exc->value;
    f.exclude_origin = exc->origin.text();
  }
  if (o.num_nodes) f.num_nodes = *o.num_nodes;
  if (o.num_gpus) f.num_gpus = *o.num_gpus;
  f = limits(s, o, f, h);
  h.selected = selectHosts(readHostfile(h.hostfile, h.hostfile_origin.text()), f);
  checkTotal(o, h);
}

// DeepSpeed's --launcher_args (mpirun's, srun's) and --venv_script (sourced where accel starts
// over ssh), each refused where its launcher has no use for it.
void launcherExtras(const LaunchOptions& o, Hosts& h) {
  if (o.launcher_args) {
    if (h.how == Hosts::How::Ssh) {
      throw UsageError(
          fmt::format("--launcher_args: {} starts the hosts over ssh itself, with no pdsh to pass them to", h.launcher),
          "pass ssh's options with --ssh_args");
    }
    auto words = shellWords(*o.launcher_args);
    if (!words) throw UsageError(fmt::format("--launcher_args '{}' has an open quote", *o.launcher_args));
    h.launcher_args = *words;
  }
  if (o.venv_script) {
    if (h.how != Hosts::How::Ssh) {
      throw UsageError(
          fmt::format("--venv_script: {} starts the hosts itself; only a launch over ssh sources it", h.launcher),
          "activate the environment in the hosts' shell start-up, or use --launcher pdsh");
    }
    h.venv_script = *o.venv_script;
  }
}

// Accelerate's standard runs torchrun on each machine and reads no hostfile: only a typed one
// makes it start the hosts.
Hosts::How howOf(const std::string& launcher, bool typed_hostfile) {
  if (launcher == "nossh" || (launcher == "standard" && !typed_hostfile)) return Hosts::How::None;
  if (launcher == "slurm") return Hosts::How::Srun;
  if (launcher == "openmpi" || launcher == "mpich" || launcher == "mvapich" || launcher == "impi")
    return Hosts::How::Mpi;
  return Hosts::How::Ssh;  // pdsh, standard with a hostfile
}

void nameHostfile(const std::optional<Typed>& file, Hosts& h) {
  if (file) {
    h.hostfile = file->value;
    h.hostfile_origin = file->origin;
    return;
  }
  struct stat st {};
  if (::stat(kDeepSpeedDefaultHostfile, &st) != 0) {
    throw UsageError(fmt::format("{} ({}) starts every machine from a hostfile, and none was given ({} does not "
                                 "exist)",
                                 h.launcher, h.launcher_origin.text(), kDeepSpeedDefaultHostfile),
                     "give --hostfile FILE (lines `HOST slots=N`) or deepspeed_hostfile in the config, or "
                     "--deepspeed_multinode_launcher nossh to run accel launch on every machine yourself");
  }
  h.hostfile = kDeepSpeedDefaultHostfile;
  h.hostfile_origin = {Source::Default, "DeepSpeed's default hostfile"};
}

}  // namespace

int Hosts::slots() const {
  int n = 0;
  for (const auto& host : selected) n += static_cast<int>(host.slots.size());
  return n;
}

Hosts resolveHosts(const LaunchSettings& s, const LaunchOptions& o, const std::map<std::string, std::string>& vars) {
  Hosts h;
  h.include = o.include;
  h.exclude = o.exclude;
  if (s.from_head || s.torchrun.grammar.value) return h;
  const auto file = eitherFlag(s, o, o.hostfile, "--hostfile", "deepspeed_config.deepspeed_hostfile");
  // accel's --hostfile starts the hosts in any job; Accelerate's --deepspeed_hostfile, as the
  // config's key, only in a DeepSpeed job of several machines (Accelerate ignores it otherwise).
  const bool typed_file = o.hostfile.has_value();
  if (vars.count(env::kSlurmStepId.name())) {
    refuseInStep(file, typed_file);  // srun started one launcher per node: this is one of them
    return h;
  }
  if (placedElsewhere(s)) return h;
  const bool deepspeed = s.paradigm.distributed_type.value == "DEEPSPEED";
  if (!typed_file && !(deepspeed && s.placement.num_machines.value > 1)) return h;
  h.launcher = deepspeed ? multinodeLauncher(s, h.launcher_origin) : "ssh";
  if (!deepspeed) h.launcher_origin = fromCommandLine("--hostfile");
  h.how = howOf(h.launcher, typed_file);
  refuseBothHostfiles(s, file);
  if (h.how == Hosts::How::None) {
    if (file) {
      h.notes.push_back(fmt::format("{} ({}): one launcher per machine, {} unused", h.launcher,
                                    h.launcher_origin.text(), file->value));
    }
    return h;
  }
  if (h.how == Hosts::How::Srun) {
    launcherExtras(o, h);
    refuseOutsideAllocation(h, vars);
    refuseSlotsForSrun(h, o);
    return h;
  }
  launcherExtras(o, h);
  refuseOtherMachine(s, h);
  nameHostfile(file, h);
  selectFromHostfile(s, o, h);
  checkSelection(s, o, h);
  const std::string cwd = env::kPwd.setIn(vars) ? env::kPwd.in(vars) : ".";
  h.ssh_options = sshOptions(o.ssh_port, o.ssh_args, vars, env::kHome.in(vars), s.channel.heartbeat_timeout.value);
  if (o.ssh_port) h.ssh_given.push_back("--ssh_port " + std::to_string(*o.ssh_port));
  if (o.ssh_args) h.ssh_given.push_back("--ssh_args " + shellQuote(*o.ssh_args));
  if (!o.ssh_args && env::kSshArgs.setIn(vars)) h.ssh_given.push_back(env::kSshArgs.name());
  h.forwarded = forwardedEnvironment(vars, cwd, env::kHome.in(vars));
  return h;
}

}  // namespace accel::launch::settings
