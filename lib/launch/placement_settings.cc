// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/placement_settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_args.h"
#include "lib/launch/plan_layout.h"
#include "lib/launch/pod_convention.h"
#include "lib/launch/torchrun_args.h"

namespace accel {

namespace {

using nlohmann::json;

const char* kCli = "command line";
const char* kConfig = "config file";

// What the launch knows of a key, level by level (placement_settings.h's order).
struct Levels {
  const LaunchOptions& o;
  const std::optional<Config>& config;
  const TorchrunPlacement torchrun;
  const std::optional<PodConvention> pod;

  // Accelerate's flag, or torchrun's typed one; both, different: a usage error naming both.
  std::optional<Sourced> typed(const std::string& key) const {
    auto t = torchrun.keys.find(key);
    const bool torchrun_typed = t != torchrun.keys.end() && t->second.typed;
    auto it = o.values.find(key);
    if (it == o.values.end()) return torchrun_typed ? std::optional<Sourced>(t->second) : std::nullopt;
    Sourced accelerate{typedFlagValue(key, it->second), kCli, true};
    if (torchrun_typed && t->second.value != accelerate.value) {
      throw UsageError(fmt::format("--{} {} and {} {} disagree: both set {}", keySpec(key).flag,
                                   accelerate.value.dump(), t->second.origin, t->second.value.dump(), key),
                       "give one of them");
    }
    return accelerate;
  }
  // torchrun's PET_*, then the pod's convention.
  std::optional<Sourced> environment(const std::string& key) const {
    if (auto t = torchrun.keys.find(key); t != torchrun.keys.end()) return t->second;
    if (pod) {
      if (auto p = pod->keys.find(key); p != pod->keys.end()) return p->second;
    }
    return std::nullopt;
  }
  const json* file(const std::string& key) const { return config ? config->find(key) : nullptr; }
};

Levels levels(const LaunchOptions& o, const std::optional<Config>& config, const LaunchFacts& f) {
  return Levels{o, config, torchrunPlacement(o), detectPodConvention(f.env)};
}

void resolveKey(LaunchSettings& s, const Levels& l, const std::string& key, const std::optional<json>& from_slurm) {
  if (auto v = l.typed(key)) return s.set(key, v->value, v->origin == kCli ? kCli : v->origin);
  if (auto v = l.environment(key)) return s.set(key, v->value, v->origin);
  if (from_slurm) return s.set(key, *from_slurm, "SLURM");
  if (const json* c = l.file(key)) return s.set(key, *c, kConfig);
  s.set(key, launchDefault(keySpec(key)), "default");
}

// A c10d endpoint without a node rank: machine 0 is the machine its host names.
void joinOrder(LaunchSettings& s, const Levels& l, const LaunchFacts& f) {
  if (!l.torchrun.endpoint_host || l.typed("machine_rank") || l.environment("machine_rank")) return;
  const std::string& host = *l.torchrun.endpoint_host;
  if (f.names_this_machine && f.names_this_machine(host)) {
    s.set("machine_rank", 0, fmt::format("rdzv endpoint {} is this machine", host));
  } else {
    s.set("machine_rank", -1, fmt::format("assigned by machine 0 ({}) as machines join", host));
    s.notes.push_back(
        fmt::format("rendezvous endpoint {} is not this machine: machine 0 is the machine {} resolves to, "
                    "and it gives this one its machine rank when it joins",
                    host, host));
  }
}

void notePod(LaunchSettings& s, const std::optional<PodConvention>& pod) {
  if (!pod) return;
  s.set("pod_convention", pod->name, "environment");
  s.set("worker_unset", pod->unset, pod->name);
  s.notes.push_back(fmt::format("Kubernetes pod, {} convention: {} (ACCEL_K8S=0 turns this off)", pod->name,
                                join(pod->variables, " ")));
}

// torchrun's N, gpu, cpu or auto on this machine.
long long localCount(const Sourced& nproc, const LaunchFacts& f) {
  const std::string text = nproc.value.get<std::string>();
  const long long cpus = f.usable_cpus.empty() ? f.physical_cores : static_cast<long long>(f.usable_cpus.size());
  if (text == "gpu" && f.visible_gpus == 0) {
    throw UsageError(fmt::format("{} gpu: this machine has no GPU to count ({})", nproc.origin,
                                 f.gpu_note.empty() ? "0 visible" : f.gpu_note),
                     "give a number of processes, or cpu (one per CPU) or auto");
  }
  if (text == "gpu") return f.visible_gpus;
  if (text == "cpu") return cpus;
  if (text == "auto") return f.visible_gpus > 0 ? f.visible_gpus : cpus;
  auto v = parseInt(text);
  if (!v || *v < 1) {
    throw UsageError(fmt::format("{} '{}' is not a number of processes, gpu, cpu or auto", nproc.origin, text),
                     "e.g. --nproc_per_node 4");
  }
  return *v;
}

// This machine's share of a total (plan_layout.h's shareOfTotal), which a machine whose rank is
// given out at the join can know only when the total divides.
long long shareOf(long long total, long long machines, long long machine, const std::string& origin) {
  if (total % machines != 0 && machine < 0) {
    throw UsageError(fmt::format("num_processes {} ({}) does not divide over {} machines, and this machine's rank is "
                                 "given out at the join",
                                 total, origin, machines),
                     "give each machine its process count with --nproc_per_node");
  }
  return shareOfTotal(total, machines, std::max(0LL, machine));
}

void resolveMachine(LaunchSettings& s, const Levels& l, const LaunchFacts& f, const std::optional<SlurmInfo>& slurm) {
  std::map<std::string, json> from_slurm;
  if (slurm) {
    from_slurm["num_machines"] = slurm->num_nodes;
    from_slurm["machine_rank"] = slurm->node_rank;
    if (!slurm->first_host.empty()) from_slurm["main_process_ip"] = slurm->first_host;
  }
  for (const char* key : {"num_machines", "machine_rank", "main_process_ip", "main_process_port"}) {
    auto it = from_slurm.find(key);
    resolveKey(s, l, key, it == from_slurm.end() ? std::nullopt : std::optional<json>(it->second));
  }
  joinOrder(s, l, f);
  notePod(s, l.pod);
  if (!slurm) return;
  s.notes.push_back(
      fmt::format("SLURM job {}: machine_rank {} of {} machines, main_process_ip {}{}", slurm->job_id,
                  s.integer("machine_rank"), s.integer("num_machines"), s.text("main_process_ip"),
                  slurm->gpus_on_node ? fmt::format(", {} GPUs on this node", *slurm->gpus_on_node) : ""));
  if (!slurm->in_step && slurm->num_nodes > 1) {
    s.notes.push_back("not inside `srun`: run one `accel launch` per node with srun (see scripts/slurm/sbatch_2x8.sh)");
  }
}

void resolveProcessCount(LaunchSettings& s, const Levels& l, const LaunchFacts& f,
                         const std::optional<SlurmInfo>& slurm) {
  const LaunchOptions& o = l.o;
  const long long machines = std::max(1LL, s.integer("num_machines"));
  const auto nproc = l.torchrun.nproc_per_node;
  auto total = [&](long long local) {
    long long out = 0;
    if (__builtin_mul_overflow(local, machines, &out)) {  // a config's num_machines can be huge
      throw UsageError(
          fmt::format("num_machines {} ({}) is more than accel can launch", machines, s.origin("num_machines")));
    }
    return out;
  };
  auto perMachine = [&](long long local, const std::string& origin, bool stated_total) {
    s.set("nproc_per_node", local, origin);
    s.set("world_at_join", !stated_total && machines > 1, "num_processes");
  };
  const auto asked = l.typed("num_processes");
  if (nproc && (nproc->typed || !asked)) {  // flag > PET: a typed --num_processes beats PET_NPROC_PER_NODE
    const long long local = localCount(*nproc, f);
    if (asked && asked->value.get<long long>() != total(local)) {
      throw UsageError(
          fmt::format("--num_processes {} and {} {} disagree: {} processes on each of {} machine(s) are {}",
                      asked->value.dump(), nproc->origin, nproc->value.get<std::string>(), local, machines,
                      total(local)),
          "--num_processes counts every machine's processes, --nproc_per_node this machine's: give one "
          "(--nproc_per_node alone lets machines run different counts)");
    }
    if (const json* c = l.file("num_processes"); c && !asked) {
      s.notes.push_back(fmt::format("{} {} overrides the config file's num_processes {}", nproc->origin,
                                    nproc->value.get<std::string>(), c->dump()));
    }
    s.set("num_processes", total(local), asked ? kCli : nproc->origin);
    return perMachine(local, nproc->origin, asked.has_value());
  }
  std::optional<Sourced> stated = asked;
  if (const json* c = l.file("num_processes"); !stated && c) stated = Sourced{*c, kConfig, false};
  // A config file's total is for the config's machine count: where PET_* or a pod said how many
  // machines, the file says how many processes each runs.
  const auto machines_said = l.environment("num_machines");
  if (const json* machines_in_file = l.file("num_machines");
      stated && !stated->typed && machines_said && s.origin("num_machines") == machines_said->origin) {
    const long long all = stated->value.get<long long>();
    const long long file_machines = machines_in_file && machines_in_file->is_number_integer()
                                        ? std::max(1LL, machines_in_file->get<long long>())
                                        : 1;
    if (all >= file_machines && all % file_machines == 0) {
      const long long local = all / file_machines;
      s.notes.push_back(
          fmt::format("num_processes {} over num_machines {} (config file): {} per machine, on the {} "
                      "machines {} says",
                      all, file_machines, local, machines, s.origin("num_machines")));
      s.set("num_processes", total(local), "config file, per machine");
      return perMachine(local, "config file, per machine", false);
    }
  }
  if (stated) {
    const long long all = stated->value.get<long long>();
    s.set("num_processes", all, stated->origin);
    if (all < 1) return perMachine(all, stated->origin, true);  // checkCounts names it
    return perMachine(shareOf(all, machines, s.integer("machine_rank"), stated->origin), stated->origin, true);
  }
  long long local = 1;
  std::string origin = s.flag("use_cpu") ? "default" : "GPU probe";
  if (o.torchrun) {
    origin = "default";  // torchrun's: one process per machine unless told
  } else if (slurm && slurm->gpus_on_node && !s.flag("use_cpu")) {
    local = std::max(1LL, *slurm->gpus_on_node);
    origin = "SLURM";
  } else if (!s.flag("use_cpu")) {
    local = std::max(1, f.visible_gpus);
  }
  s.set("num_processes", total(local), origin);
  perMachine(local, origin, false);
}

}  // namespace

void resolvePlacement(LaunchSettings& s, const LaunchOptions& o, const std::optional<Config>& config,
                      const LaunchFacts& facts, const std::optional<SlurmInfo>& slurm) {
  const Levels l = levels(o, config, facts);
  resolveMachine(s, l, facts, slurm);
  resolveProcessCount(s, l, facts, slurm);
}

}  // namespace accel
