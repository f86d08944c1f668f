// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/build.h"
#include "lib/launch/settings/watch_settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/plan/console_streams.h"
#include "lib/launch/plan/consumer_gpus.h"
#include "lib/launch/plan/exports.h"
#include "lib/launch/plan/launch_checks.h"
#include "lib/launch/plan/machine_zero.h"
#include "lib/launch/plan/mpi_hosts.h"
#include "lib/launch/plan/mpirun.h"
#include "lib/launch/plan/plan_layout.h"
#include "lib/launch/plan/torch_flight.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/plan/worker_places.h"

namespace accel::launch::plan {

namespace {

using settings::Hosts;
using settings::LaunchSettings;
using settings::Source;

// FNV-1a: a stable id from a string, for values every machine must derive alike.
std::string stableHash(const std::string& text) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

// Run id and store token, the same on every machine of a job: given, else the launcher's
// variables, else (several machines) derived from machine 0's address, else fresh.
void identify(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Machine& f) {
  const bool multi = s.placement.num_machines.value > 1 && p.kind == LaunchPlan::Kind::Workers;
  std::string run_id = s.identity.run_id.value.value_or(f.variable(launch_env::kAccelRunId));
  const std::string slurm_job = env::kSlurmJobId.in(f.env);
  if (run_id.empty() && !slurm_job.empty() && p.kind == LaunchPlan::Kind::Workers) run_id = "slurm-" + slurm_job;
  if (run_id.empty()) {
    run_id = multi ? "accel-" + stableHash(s.placement.main_process_ip.value + ":" +
                                           std::to_string(s.placement.main_process_port.value))
                   : "accel-" + f.random_hex.substr(0, 16);
  }
  std::string token = s.identity.token.value.value_or(f.variable(launch_env::kStoreToken));
  if (token.empty()) token = multi ? stableHash("accel-store-token/" + run_id) : f.token_hex;
  if (token.empty()) token = f.random_hex;  // facts made without a token's randomness (tests)
  p.run_id = run_id;
  p.token = token;
}

// Under torchrun, -r, --tee and the duplicate filters write files, in a folder of TMPDIR without
// --log_dir (torchrun's
// tempfile.mkdtemp(prefix="torchelastic_")). Under accel launch a worker that shows neither
// stream without --log_dir would lose its output: refused, naming the flag.
void keepOutput(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Machine& f) {
  if (!p.log_dir.empty() || !p.rank_log_prefix.empty()) return;
  const settings::Output& o = s.output;
  if (s.torchrun.grammar.value) {
    if (!o.redirects.value && o.tee.origin.source == Source::Default && !o.copy_filters[0].value &&
        !o.copy_filters[1].value) {
      return;
    }
    p.log_dir = fmt::format("{}/torchelastic_{}", env::kTmpDir.in(f.env), f.random_hex.substr(16, 8));
    return;
  }
  bool none = p.console_streams == 0;  // a rank that shows neither stream
  for (const auto& [rank, streams] : p.console_streams_by_rank) none = none || streams == 0;
  if (!none) return;
  throw UsageError(fmt::format("{} without --log_dir would discard worker output",
                               o.redirects.value ? "--redirects " + *o.redirects.value : "--tee " + o.tee.value),
                   "add --log_dir DIR");
}

// The terminal's input rank as this machine applies it: a default input rank on another
// machine means none here; a chosen one is an error where the user would type into this launcher.
void chooseInput(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Machine& f, bool joined) {
  const auto& chosen = s.output.stdin_rank;
  p.stdin_rank = chosen.value;
  if (p.stdin_rank < 0 || machineOfRank(p, p.stdin_rank) == p.machine_rank) return;
  // Before machine 0 settles the layout at the join, the ranks here are a guess.
  if (chosen.origin.source != Source::Default && f.stdin_terminal && !joined && !p.world_at_join &&
      p.machine_rank >= 0) {
    throw UsageError(fmt::format("--stdin_rank {}: rank {} runs on machine {}, not on this one (machine {}), whose "
                                 "terminal this is",
                                 p.stdin_rank, p.stdin_rank, machineOfRank(p, p.stdin_rank), p.machine_rank),
                     "give a rank of this machine, or none (the user's input reaches only this machine's ranks)");
  }
  p.stdin_rank = -1;
}

// Accelerate runs one process of a non-distributed job directly (its simple launcher), not
// through torchrun: that worker gets no RANK / LOCAL_RANK / WORLD_SIZE, since with LOCAL_RANK set
// on a GPU machine Accelerate's state picks MULTI_GPU and starts NCCL for a world of one.
// DeepSpeed, FSDP, Megatron-LM and --multi_gpu go through torchrun even with one process. An
// mpirun is started by that simple launcher too, and gives the ranks itself.
bool torchrunShaped(const LaunchPlan& p, const settings::LaunchSettings& s) {
  if (s.keys.has("mpirun_config.mpirun_hostfile") || s.hosts.how == settings::Hosts::How::Mpi) return false;
  if (s.torchrun.grammar.value || s.supervision.deepspeed_env.value) return true;  // theirs: even one process
  const std::string& type = s.paradigm.distributed_type.value;
  return p.world_size > 1 || p.max_machines > 1 || (type != "NO" && type != "MULTI_CPU");  // any round of several
}

// torchrun's --virtual_local_rank: local rank N sees only the N-th GPU it would have seen
// (of gpu_ids, else of the launcher's CUDA_VISIBLE_DEVICES, else GPU N).
std::string visibleDevice(const settings::LaunchSettings& s, const facts::Machine& f, int local) {
  const bool ids = s.keys.has("gpu_ids") && s.keys.text("gpu_ids") != "all";
  const std::string visible = ids ? s.keys.text("gpu_ids") : f.variable(launch_env::kCudaVisibleDevices);
  if (visible.empty()) return std::to_string(local);
  const auto list = split(visible, ',');
  if (static_cast<size_t>(local) >= list.size()) {
    throw UsageError(fmt::format("--virtual_local_rank: local rank {} has no GPU of {}={}", local,
                                 ids ? "gpu_ids" : launch_env::kCudaVisibleDevices, visible),
                     "run as many processes as there are GPUs to give them");
  }
  return trim(list[static_cast<size_t>(local)]);
}

// DeepSpeed's CUDA_VISIBLE_DEVICES: the machine's slots (gpu_ids), else 0..N-1, set even on a
// machine without GPUs, as its launch.py sets it.
std::string deviceIds(const settings::LaunchSettings& s) {
  const std::string ids = s.keys.text("gpu_ids");
  if (!ids.empty() && ids != "all") return ids;
  std::vector<std::string> all;
  for (long long i = 0; i < s.placement.nproc_per_node.value; ++i) all.push_back(std::to_string(i));
  return join(all, ",");
}

void addWorkers(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Facts& f) {
  const int count = static_cast<int>(s.placement.nproc_per_node.value);
  const auto shares = workerPlaces(p, s, f, count);
  if (s.supervision.bind_cores.value && !shares.empty()) {  // DeepSpeed's OMP_NUM_THREADS: the cores per rank
    p.exports.emplace_back(launch_env::kOmpNumThreads, std::to_string(shares.front().cpus.size()));
  }
  const int machine = std::max(0, p.machine_rank);
  const int first = firstRankOf(p.layout, machine);
  const RoleShare role = roleShareOf(p.layout, machine);
  const bool virtual_rank = s.torchrun.virtual_local_rank.value;
  for (int local = 0; local < count; ++local) {
    WorkerSpec w;
    w.local_rank = local;
    w.rank = first + local;
    w.role_rank = role.first + local;
    w.argv = f.program;
    if (s.supervision.local_rank_arg.value) {  // DeepSpeed's: after the script, before its arguments
      const auto at = w.argv.end() - static_cast<long>(std::max<size_t>(1, s.command.size()) - 1);
      w.argv.insert(at, fmt::format("--local_rank={}", w.rank % count));
    }
    w.cpus = shares[static_cast<size_t>(local)].cpus;
    w.memory_node = shares[static_cast<size_t>(local)].memory_node;
    if (virtual_rank) w.cuda_visible_device = visibleDevice(s, f.machine, local);
    p.workers.push_back(std::move(w));
  }
}

// The job's share of the plan, common to every kind.
void planJob(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Machine& f) {
  p.num_machines = static_cast<int>(s.placement.num_machines.value);
  p.max_machines = p.num_machines;
  p.min_machines = static_cast<int>(s.placement.min_machines.value);
  p.dynamic = s.placement.dynamic;
  p.etcd = s.placement.etcd;
  p.local_addr = s.torchrun.local_addr.value.value_or("");
  p.last_call_timeout = s.channel.last_call_timeout.value;
  p.machine_rank = static_cast<int>(s.placement.machine_rank.value);
  p.main_process_port = static_cast<int>(s.placement.main_process_port.value);
  p.job_port = s.channel.job_port.value;
  p.role = s.supervision.role.value;
  p.max_restarts = s.supervision.max_restarts.value;
  p.restart_hangs = s.supervision.restart_hangs.value;
  p.startup_timeout = s.supervision.startup_timeout.value;
  p.max_startup_failures = s.supervision.max_startup_failures.value;
  p.max_machine_failures = s.supervision.max_machine_failures.value;
  p.max_no_progress_restarts = s.supervision.max_no_progress_restarts.value;
  p.gpu_free_timeout = s.supervision.gpu_free_timeout.value;
  p.gpus = !s.paradigm.use_cpu.value && f.visible_gpus > 0;
  if (p.gpus) {
    for (const auto& gpu : f.gpus) p.gpu_bus_ids.push_back(gpu.pci_bus_id);
  }
  p.grace_period = s.supervision.grace_period.value;
  p.heartbeat_timeout = s.channel.heartbeat_timeout.value;
  p.join_timeout = s.channel.join_timeout.value;
  p.hang_timeout = s.channel.hang_timeout.value;
  p.stacks_timeout = s.channel.stacks_timeout.value;
  p.flight_entries = s.channel.flight_entries.value;
  p.stragglers = {p.flight_entries > 0 ? s.channel.straggler_window.value : 0, s.channel.straggler_share.value,
                  s.channel.straggler_lateness.value};
  p.clock_skew_ns = static_cast<int64_t>(s.channel.clock_skew.value * 1e9);
  p.host = f.hostname;
  p.one_console = s.from_head;
  identify(p, s, f);
}

void useMachineZero(LaunchPlan& p, const MachineZero& zero) {
  p.master_addr = zero.address;
  p.master_port = zero.port;
  p.socket_interface = zero.interface;
  p.socket_variables = zero.socket_variables;
  p.notes.insert(p.notes.end(), zero.notes.begin(), zero.notes.end());
}

// torchrun's comma_separated_list: ",," stands for a comma inside an item.
std::vector<std::string> torchrunList(const std::string& text) {
  std::vector<std::string> items(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != ',') {
      items.back() += text[i];
    } else if (i + 1 < text.size() && text[i + 1] == ',') {
      items.back() += ',';
      ++i;
    } else {
      items.emplace_back();
    }
  }
  return items;
}

// The event log's targets and /metrics' address: --metrics_addr, else --local_addr, else the
// address this machine reaches machine 0 from (on one machine, loopback): never every interface.
void planWatching(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Network& network) {
  const settings::Watching& w = s.watching;
  if (w.event_log.value) {
    p.watching.event_fd = settings::eventLogDescriptor(*w.event_log.value, "--event_log");
    if (p.watching.event_fd < 0) p.watching.event_file = *w.event_log.value;
  }
  p.watching.console_events = w.console_events.value;
  p.watching.metrics_port = w.metrics_port.value;
  p.watching.metrics_linger = w.metrics_linger.value;
  if (!p.watching.metrics_port) return;
  if (w.metrics_addr.value) {
    p.watching.metrics_addr = *w.metrics_addr.value;
  } else if (!p.local_addr.empty()) {
    p.watching.metrics_addr = p.local_addr;
  } else {
    p.watching.metrics_addr = network.routeTowards(p.master_addr).address;
    if (p.watching.metrics_addr.empty()) p.watching.metrics_addr = "127.0.0.1";
  }
}

// What the workers' output does: the console's streams and ranks, the files, the terminal.
void planOutput(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Machine& f, bool joined) {
  p.log_dir = s.output.log_dir.value.value_or("");
  for (int i = 0; i < 2; ++i) {
    if (s.output.copy_filters[i].value) p.copy_filters[i] = torchrunList(*s.output.copy_filters[i].value);
  }
  if (s.output.each_rank_log.value) {  // DeepSpeed's: the files only, nothing on the console
    p.rank_log_prefix = fmt::format("{}/{}_rank", *s.output.each_rank_log.value, f.start_stamp);
  }
  p.line_prefix_template = s.output.line_prefix_template.value.value_or("");
  p.pty = s.output.pty.value;
  p.progress_interval = s.output.progress_interval.value;
  setConsoleStreams(p, s);
  if (!p.rank_log_prefix.empty()) {
    p.console_streams = 0;
    p.console_streams_by_rank.clear();
  }
  chooseInput(p, s, f, joined);
  keepOutput(p, s, f);
}

// This machine's workers (one mpirun for them all, in an MPI launch).
LaunchPlan planWorkers(const settings::LaunchSettings& s, const facts::Facts& f, const Round& round) {
  LaunchPlan p;
  checkSizes(s);  // first: every count below then fits an int
  checkCounts(s, f.machine);
  checkFsdp(s);
  planJob(p, s, f.machine);
  p.world_at_join = s.placement.world_at_join;
  p.layout = round.layout.empty() ? initialLayout(s) : round.layout;
  if (!round.layout.empty()) p.num_machines = static_cast<int>(round.layout.size());
  if (round.machine) p.machine_rank = *round.machine;
  p.restarts = round.restarts;
  p.world_size = worldOf(p.layout);
  checkParallelism(s, p.world_size, p.notes);
  useMachineZero(p, reachMachineZero(s, f, round.port));
  if (!round.master_addr.empty()) p.master_addr = round.master_addr;
  planWatching(p, s, *f.network);
  p.label_host = p.max_machines > 1 ? f.machine.hostname : "";
  planOutput(p, s, f.machine, !round.layout.empty());
  p.torchrun_env = torchrunShaped(p, s);
  if (s.supervision.deepspeed_env.value && p.torchrun_env) {
    p.deepspeed_env = true;
    p.torchrun_env = false;
    p.device_ids = deviceIds(s);
  }
  p.virtual_local_rank = s.torchrun.virtual_local_rank.value;
  p.exports = settingsExports(s, f.machine, p.torchrun_env);
  consumerGpuWorkaround(s, f.machine, p.exports, p.notes);
  if (s.placement.pod) p.unset = s.placement.pod->unset;
  p.user_env = s.supervision.env;
  addWorkers(p, s, f);
  planTorchFlight(p, f.machine, f.program);
  for (auto& note : ignoredUserEnv(p, s.supervision.env)) p.notes.push_back(std::move(note));
  if (s.hosts.how == settings::Hosts::How::Mpi) {  // one launcher, this one: mpirun's ranks need no job channel
    p.num_machines = 1;
    p.world_size = s.hosts.slots();
    p.world_at_join = false;
    p.label_host.clear();
    p.workers = {hostsMpirunWorker(p, s, f.programs->mpirun(s.hosts.launcher), f.mpi_hostfile, f.machine.as_root)};
  } else if (s.keys.has("mpirun_config.mpirun_hostfile")) {
    p.workers = {mpirunWorker(p, s, f.programs->mpirun(""), f.machine.as_root)};
  }
  return p;
}

// A hostfile head: every selected host's place, sent in its orders.
LaunchPlan planFleet(const settings::LaunchSettings& s, const facts::Facts& f) {
  LaunchPlan p;
  p.kind = LaunchPlan::Kind::Fleet;
  planJob(p, s, f.machine);
  useMachineZero(p, reachMachineZero(s, f, 0));
  const auto& selected = s.hosts.selected;
  p.num_machines = static_cast<int>(selected.size());
  for (size_t k = 0; k < selected.size(); ++k) {
    const settings::HostSlots& host = selected[k];
    HostPlan h;
    h.place = {host.host,
               static_cast<int>(k),
               p.num_machines,
               p.master_addr,
               p.master_port,
               static_cast<int>(host.slots.size()),
               "",
               p.token,
               p.run_id};
    bool from_zero = true;
    for (size_t i = 0; i < host.slots.size(); ++i) from_zero = from_zero && host.slots[i] == static_cast<int>(i);
    if (!from_zero) {
      std::vector<std::string> ids;
      for (int slot : host.slots) ids.push_back(std::to_string(slot));
      h.place.gpu_ids = join(ids, ",");
    }
    h.local = f.network && f.network->namesThisMachine(host.host);
    p.layout.push_back({h.place.procs, p.role});
    p.hosts.push_back(std::move(h));
  }
  if (allLocal(p.hosts) && !s.hosts.ssh_given.empty()) {
    p.notes.push_back(
        fmt::format("note: every host is this machine: their launchers start without ssh, so {} do not apply",
                    join(s.hosts.ssh_given, " and ")));
  }
  p.world_size = worldOf(p.layout);
  return p;
}

// deepspeed_multinode_launcher slurm: one `accel launch` per node through srun.
LaunchPlan planSrun(const settings::LaunchSettings& s, const facts::Facts& f) {
  LaunchPlan p;
  p.kind = LaunchPlan::Kind::Srun;
  planJob(p, s, f.machine);
  const std::string nodes = std::to_string(s.placement.num_machines.value);
  p.srun_argv = {"srun", "--nodes=" + nodes, "--ntasks=" + nodes, "--ntasks-per-node=1", "--kill-on-bad-exit=1"};
  std::vector<std::string> only, except;
  for (const auto& [filter, names] : {std::pair{s.hosts.include, &only}, std::pair{s.hosts.exclude, &except}}) {
    if (!filter) continue;
    for (const auto& entry : split(*filter, '@')) names->push_back(split(entry, ':').front());
  }
  if (!only.empty()) p.srun_argv.push_back("--nodelist=" + join(only, ","));
  if (!except.empty()) p.srun_argv.push_back("--exclude=" + join(except, ","));
  p.srun_argv.insert(p.srun_argv.end(), s.hosts.launcher_args.begin(), s.hosts.launcher_args.end());
  p.srun_argv.insert(p.srun_argv.end(), {f.machine.self, "launch"});
  p.srun_argv.insert(p.srun_argv.end(), s.words.begin(), s.words.end());
  return p;
}

}  // namespace

LaunchPlan build(const settings::LaunchSettings& s, const facts::Facts& f, const Round& round) {
  checkMembership(s);
  switch (s.hosts.how) {
    case settings::Hosts::How::Ssh: return planFleet(s, f);
    case settings::Hosts::How::Srun: return planSrun(s, f);
    case settings::Hosts::How::Mpi:
    case settings::Hosts::How::None: break;
  }
  return planWorkers(s, f, round);
}

}  // namespace accel::launch::plan
