// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/placement_settings.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/pod_convention.h"
#include "lib/launch/settings/torchrun_args.h"

namespace accel::launch::settings {

namespace {

using nlohmann::json;

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
    Sourced accelerate{it->second, fromCommandLine(), true};
    if (torchrun_typed && t->second.value != accelerate.value) {
      throw UsageError(fmt::format("--{} {} and {} {} disagree: both set {}", keySpec(key).flag,
                                   accelerate.value.dump(), t->second.origin.text(), t->second.value.dump(), key),
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

template <class T> Setting<T> as(const Sourced& s) { return {s.value.get<T>(), s.origin}; }

// The key's value, level by level: flag > PET_* > pod > SLURM > config > default.
Sourced resolveKey(const Levels& l, const std::string& key, const std::optional<json>& from_slurm) {
  if (auto v = l.typed(key)) return *v;
  if (auto v = l.environment(key)) return *v;
  if (from_slurm) return {*from_slurm, {Source::Slurm, {}}, false};
  if (const json* c = l.file(key)) return {*c, fromConfigFile(), false};
  return {launchDefault(keySpec(key)), fromDefault(), false};
}

// --rdzv_backend etcd: every machine joins through etcd, which elects machine 0 (the first to
// claim it, then a survivor whenever it is lost); ranks are given out in each round.
void electedInEtcd(Placement& p, const Levels& l, const facts::Facts& f, std::vector<std::string>& notes) {
  etcd::EtcdPlace place = *l.torchrun.etcd;
  place.user = env::kEtcdUser.in(f.machine.env);
  place.password = env::kEtcdPassword.in(f.machine.env);
  if (place.user.empty() != place.password.empty()) {
    throw UsageError(
        fmt::format("{} is set without {}", place.user.empty() ? env::kEtcdPassword.name() : env::kEtcdUser.name(),
                    place.user.empty() ? env::kEtcdUser.name() : env::kEtcdPassword.name()),
        "set both (an etcd user and its password), or neither for an etcd without authentication");
  }
  p.etcd = place;
  p.dynamic = true;
  p.join_order = true;
  p.machine_rank = {
      -1, derivedFrom(fmt::format("given out in each round by the etcd rendezvous at {}", place.server.text()))};
  notes.push_back(
      fmt::format("rendezvous in etcd at {}: machine 0 is the launcher etcd elects (the first to claim "
                  "it, then a survivor whenever it is lost)",
                  place.server.text()));
}

// A c10d endpoint without a node rank: machine 0 is the machine its host names (or the one whose
// --rdzv_conf says is_host=true), and it gives out the others' ranks as they join.
void joinOrder(Placement& p, const Levels& l, const facts::Facts& f, std::vector<std::string>& notes) {
  if (l.torchrun.etcd) return electedInEtcd(p, l, f, notes);
  if (!l.torchrun.endpoint_host) return;
  const bool elastic = p.min_machines.value < p.num_machines.value;
  if (!elastic && (l.typed("machine_rank") || l.environment("machine_rank"))) return;
  p.dynamic = true;
  const std::string& host = *l.torchrun.endpoint_host;
  const bool here = l.torchrun.is_host ? *l.torchrun.is_host : f.network && f.network->namesThisMachine(host);
  const std::string why = l.torchrun.is_host ? "--rdzv_conf is_host" : fmt::format("rdzv endpoint {}", host);
  if (here) {
    p.machine_rank = {0, derivedFrom(fmt::format("{} is this machine", why))};
    return;
  }
  p.machine_rank = {-1, derivedFrom(fmt::format("assigned by machine 0 ({}) as machines join", host))};
  p.join_order = true;
  notes.push_back(
      fmt::format("rendezvous endpoint {} is not this machine: machine 0 is the machine {} resolves to, "
                  "and it gives this one its machine rank when it joins",
                  host, host));
}

// --nnodes MIN:MAX: machines come and go only where machine 0 gives out the ranks.
void resolveMembership(Placement& p, const Levels& l) {
  p.min_machines = p.num_machines;
  if (const auto& min = l.torchrun.min_machines;
      min && p.num_machines.origin == l.torchrun.keys.at("num_machines").origin) {
    p.min_machines = {min->value.get<long long>(), min->origin};
  }
  // A hostfile or mpirun starts every machine at once: plan/launch_checks.h's checkMembership says so.
  bool hosts = l.o.hostfile.has_value();
  for (const char* key : {"mpirun_config.mpirun_hostfile", "deepspeed_config.deepspeed_hostfile"}) {
    hosts = hosts || l.typed(key) || l.file(key);
  }
  if (p.min_machines.value < p.num_machines.value && !l.torchrun.endpoint_host && !l.torchrun.etcd && !hosts) {
    throw UsageError(fmt::format("{} {}:{}: machines that come and go need a rendezvous that gives out their ranks",
                                 p.num_machines.origin.text(), p.min_machines.value, p.num_machines.value),
                     "add --rdzv_backend c10d --rdzv_endpoint HOST:PORT (HOST: the machine that stays up), the same "
                     "on every machine");
  }
}

// The head's orders: this machine's place, over every other source.
void placeFromHead(Placement& p, const HeadPlace& place) {
  const Origin head{Source::Head, {}};
  p.num_machines = {place.num_machines, head};
  p.machine_rank = {place.machine_rank, head};
  p.main_process_ip = {place.main_addr, head};
  p.main_process_port = {place.main_port, head};
}

void resolveMachine(Placement& p, const Levels& l, const facts::Facts& f, std::vector<std::string>& notes) {
  std::map<std::string, json> from_slurm;
  if (p.slurm) {
    from_slurm["num_machines"] = p.slurm->num_nodes;
    from_slurm["machine_rank"] = p.slurm->node_rank;
    if (!p.slurm->first_host.empty()) from_slurm["main_process_ip"] = p.slurm->first_host;
  }
  auto key = [&](const char* name) {
    auto it = from_slurm.find(name);
    return resolveKey(l, name, it == from_slurm.end() ? std::nullopt : std::optional<json>(it->second));
  };
  p.num_machines = as<long long>(key("num_machines"));
  p.machine_rank = as<long long>(key("machine_rank"));
  p.main_process_ip = as<std::string>(key("main_process_ip"));
  p.main_process_port = as<long long>(key("main_process_port"));
  resolveMembership(p, l);
  joinOrder(p, l, f, notes);
  notes.insert(notes.end(), l.torchrun.notes.begin(), l.torchrun.notes.end());
}

void notePlacement(const Placement& p, std::vector<std::string>& notes) {
  if (p.pod) {
    notes.push_back(fmt::format("Kubernetes pod, {} convention: {} (ACCEL_K8S=0 turns this off)", p.pod->name,
                                join(p.pod->variables, " ")));
  }
  if (!p.slurm) return;
  notes.push_back(
      fmt::format("SLURM job {}: machine_rank {} of {} machines, main_process_ip {}{}", p.slurm->job_id,
                  p.machine_rank.value, p.num_machines.value, p.main_process_ip.value,
                  p.slurm->gpus_on_node ? fmt::format(", {} GPUs on this node", *p.slurm->gpus_on_node) : ""));
  if (!p.slurm->in_step && p.slurm->num_nodes > 1) {
    notes.push_back("not inside `srun`: run one `accel launch` per node with srun (see scripts/slurm/sbatch_2x8.sh)");
  }
}

// torchrun's N, gpu, cpu or auto on this machine.
long long localCount(const Sourced& nproc, const facts::Machine& f) {
  const std::string text = nproc.value.get<std::string>();
  const long long cpus = f.usable_cpus.empty() ? f.physical_cores : static_cast<long long>(f.usable_cpus.size());
  if (text == "gpu" && f.visible_gpus == 0) {
    throw UsageError(fmt::format("{} gpu: this machine has no GPU to count ({})", nproc.origin.text(),
                                 f.gpu_note.empty() ? "0 visible" : f.gpu_note),
                     "give a number of processes, or cpu (one per CPU) or auto");
  }
  if (text == "gpu") return f.visible_gpus;
  if (text == "cpu") return cpus;
  if (text == "auto") return f.visible_gpus > 0 ? f.visible_gpus : cpus;
  auto v = parseInt(text);
  if (!v || *v < 1) {
    throw UsageError(fmt::format("{} '{}' is not a number of processes, gpu, cpu or auto", nproc.origin.text(), text),
                     "e.g. --nproc_per_node 4");
  }
  return *v;
}

// This machine's share of `total` processes over `machines`: the first total % machines
// machines run one more. A machine whose rank is given out at the join can know its share only
// when the total divides.
long long shareOf(long long total, long long machines, long long machine, const Origin& origin) {
  if (total % machines != 0 && machine < 0) {
    throw UsageError(fmt::format("num_processes {} ({}) does not divide over {} machines, and this machine's rank is "
                                 "given out at the join",
                                 total, origin.text(), machines),
                     "give each machine its process count with --nproc_per_node");
  }
  return total / machines + (std::max(0LL, machine) < total % machines ? 1 : 0);
}

struct Counter {
  Placement& p;
  const Levels& l;
  const facts::Machine& f;
  std::vector<std::string>& notes;

  long long machines() const { return std::max(1LL, p.num_machines.value); }
  long long total(long long local) const {
    long long out = 0;
    if (__builtin_mul_overflow(local, machines(), &out)) {  // a config's num_machines can be huge
      throw UsageError(
          fmt::format("num_machines {} ({}) is more than accel can launch", machines(), p.num_machines.origin.text()));
    }
    return out;
  }
  void perMachine(long long local, const Origin& origin, bool stated_total) {
    p.nproc_per_node = {local, origin};
    p.world_at_join = !stated_total && machines() > 1;
  }
};

// torchrun's --nproc_per_node or PET_NPROC_PER_NODE, against a typed --num_processes.
void countFromNproc(Counter& c, const Sourced& nproc, const std::optional<Sourced>& asked) {
  const long long local = localCount(nproc, c.f);
  const std::string text = nproc.value.get<std::string>();
  if (asked && asked->value.get<long long>() != c.total(local)) {
    throw UsageError(fmt::format("--num_processes {} and {} {} disagree: {} processes on each of {} machine(s) are {}",
                                 asked->value.dump(), nproc.origin.text(), text, local, c.machines(), c.total(local)),
                     "--num_processes counts every machine's processes, --nproc_per_node this machine's: give one "
                     "(--nproc_per_node alone lets machines run different counts)");
  }
  if (const json* file = c.l.file("num_processes"); file && !asked) {
    c.notes.push_back(
        fmt::format("{} {} overrides the config file's num_processes {}", nproc.origin.text(), text, file->dump()));
  }
  const Origin total = asked ? fromCommandLine()
                       : c.machines() > 1
                           ? derivedFrom(fmt::format("{} × {}", nproc.origin.text(), c.p.num_machines.origin.text()))
                           : nproc.origin;
  c.p.num_processes = {c.total(local), total};
  c.perMachine(local, nproc.origin, asked.has_value());
}

// A config file's total is for the config's machine count: where PET_* or a pod said how many
// machines, the file says how many processes each runs. True when that applied.
bool countPerMachineOfFile(Counter& c, const Sourced& stated) {
  const auto machines_said = c.l.environment("num_machines");
  if (stated.typed || !machines_said || !(c.p.num_machines.origin == machines_said->origin)) return false;
  const long long all = stated.value.get<long long>();
  const json* in_file = c.l.file("num_machines");
  const long long file_machines =
      in_file && in_file->is_number_integer() ? std::max(1LL, in_file->get<long long>()) : 1;
  if (all < file_machines || all % file_machines != 0) return false;
  const long long local = all / file_machines;
  c.notes.push_back(
      fmt::format("num_processes {} over num_machines {} (config file): {} per machine, on the {} "
                  "machines {} says",
                  all, file_machines, local, c.machines(), c.p.num_machines.origin.text()));
  const Origin per_machine = fromConfigFile("config file, per machine");
  c.p.num_processes = {c.total(local), per_machine};
  c.perMachine(local, per_machine, false);
  return true;
}

// Nothing said how many: one per visible GPU (SLURM's count in an allocation), else one.
void countByDefault(Counter& c, const LaunchSettings& s) {
  long long local = 1;
  Origin origin = s.paradigm.use_cpu.value ? fromDefault() : Origin{Source::Machine, "GPU probe"};
  if (s.torchrun.grammar.value) {
    origin = fromDefault();  // torchrun's: one process per machine unless told
  } else if (c.p.slurm && c.p.slurm->gpus_on_node && !s.paradigm.use_cpu.value) {
    local = std::max(1LL, *c.p.slurm->gpus_on_node);
    origin = {Source::Slurm, {}};
  } else if (!s.paradigm.use_cpu.value) {
    local = std::max(1, c.f.visible_gpus);
  }
  c.p.num_processes = {c.total(local), origin};
  c.perMachine(local, origin, false);
}

void resolveProcessCount(Counter& c, const LaunchSettings& s, const HeadPlace* place) {
  if (place) {
    const Origin head{Source::Head, {}};
    c.p.num_processes = {c.total(place->procs), head};
    return c.perMachine(place->procs, head, false);
  }
  const auto nproc = c.l.torchrun.nproc_per_node;
  const auto asked = c.l.typed("num_processes");
  if (nproc && (nproc->typed || !asked)) return countFromNproc(c, *nproc, asked);  // a typed total beats PET
  std::optional<Sourced> stated = asked;
  if (const json* file = c.l.file("num_processes"); !stated && file) stated = Sourced{*file, fromConfigFile(), false};
  if (stated && countPerMachineOfFile(c, *stated)) return;
  if (!stated) return countByDefault(c, s);
  const long long all = stated->value.get<long long>();
  c.p.num_processes = {all, stated->origin};
  if (all < 1) return c.perMachine(all, stated->origin, true);  // the checks name it
  c.perMachine(shareOf(all, c.machines(), c.p.machine_rank.value, stated->origin), stated->origin, true);
}

}  // namespace

Placement resolvePlacement(const LaunchSettings& s, const LaunchOptions& o, const std::optional<Config>& config,
                           const facts::Facts& facts, const HeadPlace* place, std::vector<std::string>& notes) {
  const Levels l{o, config, torchrunPlacement(o), detectPodConvention(facts.machine.env)};
  Placement p;
  p.rdzv_conf = l.torchrun.rdzv_conf;
  p.rdzv_conf_origin = l.torchrun.rdzv_conf_origin;
  p.pod = l.pod;
  p.slurm = detectSlurm(facts.machine.env);
  if (place) {
    placeFromHead(p, *place);
    p.min_machines = p.num_machines;
  } else {
    resolveMachine(p, l, facts, notes);
    notePlacement(p, notes);
  }
  Counter c{p, l, facts.machine, notes};
  resolveProcessCount(c, s, place);
  if (p.min_machines.value < p.num_machines.value && !p.world_at_join) {
    throw UsageError(fmt::format("num_processes {} ({}) is the whole job's, but with {} {}:{} the machines, and so the "
                                 "total, change from round to round",
                                 p.num_processes.value, p.num_processes.origin.text(), p.num_machines.origin.text(),
                                 p.min_machines.value, p.num_machines.value),
                     "give each machine its own count with --nproc_per_node");
  }
  return p;
}

}  // namespace accel::launch::settings
