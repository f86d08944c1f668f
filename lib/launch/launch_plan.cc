// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/launch_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/validate.h"
#include "lib/launch/console_streams.h"
#include "lib/launch/cpu_affinity.h"
#include "lib/launch/launch_checks.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/log_layout.h"
#include "lib/launch/paradigm_env.h"
#include "lib/launch/plan_layout.h"

namespace accel {

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// FNV-1a: a stable id from a string, for values every machine must derive alike.
std::string stableHash(const std::string& text) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

std::string envOr(const LaunchFacts& f, const char* name) {
  auto it = f.env.find(name);
  return it == f.env.end() ? "" : it->second;
}

// Run id and store token, the same on every machine of a job.
std::pair<std::string, std::string> runIdentity(const LaunchSettings& s, const LaunchFacts& f) {
  std::string run_id = s.has("rdzv_id") ? s.text("rdzv_id") : envOr(f, launch_env::kAccelRunId);
  bool multi = s.integer("num_machines") > 1;
  if (run_id.empty() && !envOr(f, launch_env::kSlurmJobId).empty())
    run_id = "slurm-" + envOr(f, launch_env::kSlurmJobId);
  if (run_id.empty()) {
    run_id = multi ? "accel-" + stableHash(s.text("main_process_ip") + ":" + s.text("main_process_port"))
                   : "accel-" + f.random_hex.substr(0, 16);
  }
  std::string token = s.has("rdzv_token") ? s.text("rdzv_token") : envOr(f, launch_env::kStoreToken);
  if (token.empty()) token = multi ? stableHash("accel-store-token/" + run_id) : f.token_hex;
  if (token.empty()) token = f.random_hex;  // facts made without a token's randomness (tests)
  return {run_id, token};
}

// Under torchrun, -r and --tee write files, in a folder of TMPDIR without --log_dir (torchrun's
// tempfile.mkdtemp(prefix="torchelastic_")). Under accel launch a worker that shows neither
// stream without --log_dir would lose its output: refused, naming the flag.
void checkOutputKept(LaunchPlan& p, const LaunchSettings& s, const LaunchFacts& f) {
  if (!p.log_dir.empty()) return;
  if (s.flag("torchrun")) {
    if (!s.has("redirects") && s.origin("tee") == "default") return;
    const std::string tmp = envOr(f, launch_env::kTmpDir);
    p.log_dir = fmt::format("{}/torchelastic_{}", tmp.empty() ? "/tmp" : tmp, f.random_hex.substr(16, 8));
    return;
  }
  bool none = p.console_streams == 0;  // a rank that shows neither stream
  for (const auto& [rank, streams] : p.console_streams_by_rank) none = none || streams == 0;
  if (!none) return;
  throw UsageError(fmt::format("{} without --log_dir would discard worker output",
                               s.has("redirects") ? "--redirects " + s.text("redirects") : "--tee " + s.text("tee")),
                   "add --log_dir DIR");
}

// torchrun's --virtual_local_rank: local rank N sees only the N-th GPU it would have seen
// (of gpu_ids, else of the launcher's CUDA_VISIBLE_DEVICES, else GPU N).
std::string visibleDevice(const LaunchSettings& s, const LaunchFacts& f, int local) {
  const bool ids = s.has("gpu_ids") && s.text("gpu_ids") != "all";
  const std::string visible = ids ? s.text("gpu_ids") : envOr(f, launch_env::kCudaVisibleDevices);
  if (visible.empty()) return std::to_string(local);
  const auto list = split(visible, ',');
  if (static_cast<size_t>(local) >= list.size()) {
    throw UsageError(fmt::format("--virtual_local_rank: local rank {} has no GPU of {}={}", local,
                                 ids ? "gpu_ids" : launch_env::kCudaVisibleDevices, visible),
                     "run as many processes as there are GPUs to give them");
  }
  return trim(list[static_cast<size_t>(local)]);
}

// Sets `name` in `env`, replacing a value it had.
void put(Env& env, const char* name, std::string value) {
  for (auto& [k, v] : env) {
    if (k == name) return void(v = std::move(value));
  }
  env.emplace_back(name, std::move(value));
}

std::string pyBool(bool v) { return v ? "True" : "False"; }

// Accelerate runs one process of a non-distributed job directly (its simple launcher), not
// through torchrun: that worker gets no RANK / LOCAL_RANK / WORLD_SIZE, since with LOCAL_RANK set
// on a GPU machine Accelerate's state picks MULTI_GPU and starts NCCL for a world of one. DeepSpeed,
// FSDP, Megatron-LM and --multi_gpu go through torchrun even with one process. mpirun
// (--mpirun_hostfile) is started by that simple launcher too, and gives the ranks itself.
bool torchrunShaped(const LaunchPlan& p, const LaunchSettings& s) {
  if (s.has("mpirun_config.mpirun_hostfile")) return false;
  if (s.flag("torchrun")) return true;
  const std::string type = s.text("distributed_type");
  return p.world_size > 1 || p.num_machines > 1 || (type != "NO" && type != "MULTI_CPU");
}

Env torchrunEnv(const LaunchPlan& p, const LaunchSettings& s, const std::string& run_id, int per_machine) {
  namespace E = launch_env;
  return {
      {E::kWorldSize, std::to_string(p.world_size)},
      {E::kLocalWorldSize, std::to_string(per_machine)},
      {E::kGroupRank, std::to_string(p.machine_rank)},
      {E::kGroupWorldSize, std::to_string(p.num_machines)},
      {E::kRoleWorldSize, std::to_string(p.world_size)},
      {E::kRoleName, s.text("role")},
      {E::kMasterAddr, p.master_addr},
      {E::kMasterPort, std::to_string(p.master_port)},
      {E::kMaxRestarts, std::to_string(p.max_restarts)},
      {E::kRunId, run_id},
      {E::kSignalsToHandle, s.text("signals_to_handle")},
  };
}

Env commonEnv(const LaunchPlan& p, const LaunchSettings& s, const LaunchFacts& f,
              const std::pair<std::string, std::string>& identity, int per_machine, bool torchrun) {
  namespace E = launch_env;
  Env env = torchrun ? torchrunEnv(p, s, identity.first, per_machine) : Env{};
  if (!torchrun && (p.world_size > 1 || p.num_machines > 1)) {  // as the simple launcher: mpirun's ranks meet here
    env.insert(env.end(), {{E::kMasterAddr, p.master_addr}, {E::kMasterPort, std::to_string(p.master_port)}});
  }
  env.insert(env.end(), {{E::kAccelRunId, identity.first}, {E::kStoreToken, identity.second}});
  if (s.has("num_cpu_threads_per_process")) env.emplace_back(E::kOmpNumThreads, s.text("num_cpu_threads_per_process"));
  if (s.origin("collective_timeout") == "command line") {  // from the environment, workers inherit it
    env.emplace_back(E::kCollectiveTimeout, fmt::format("{:g}", s.value("collective_timeout").get<double>()));
  }
  if (torchrun && envOr(f, E::kNcclAsyncErrorHandling).empty()) env.emplace_back(E::kNcclAsyncErrorHandling, "1");
  if (!p.label_host.empty()) env.emplace_back(E::kMachineName, p.label_host);
  if (s.flag("torchrun")) return env;  // torchrun's workers: none of Accelerate's variables
  // As Accelerate: its simple launcher (one process, and mpirun) always says; torchrun's path only
  // when the job runs on CPUs (accel's own several CPU workers).
  if (!torchrun || s.flag("use_cpu")) env.emplace_back(E::kUseCpu, pyBool(s.flag("use_cpu")));
  if (s.flag("use_cpu")) {  // Accelerate's Intel OpenMP settings for CPU jobs (libgomp ignores them)
    env.insert(env.end(), {{E::kKmpAffinity, "granularity=fine,compact,1,0"}, {E::kKmpBlocktime, "1"}});
  }
  if (!s.flag("use_cpu") && s.text("gpu_ids") != "all") env.emplace_back(E::kCudaVisibleDevices, s.text("gpu_ids"));
  if (s.text("distributed_type") == "DEEPSPEED") {  // as Accelerate: the script's directory imports
    std::string path = envOr(f, "PYTHONPATH");
    env.emplace_back("PYTHONPATH", (path.empty() ? "" : path + ":") + envOr(f, "PWD"));
  }
  for (auto& kv : paradigmEnv(s)) env.push_back(std::move(kv));
  return env;
}

// The worker's own: its ranks (torchrun's form only), and the restart count where it can restart.
Env rankEnv(const LaunchPlan& p, int rank, int local_rank, bool torchrun) {
  namespace E = launch_env;
  Env env;
  if (torchrun) {
    env = {{E::kRank, std::to_string(rank)},
           {E::kLocalRank, std::to_string(local_rank)},
           {E::kRoleRank, std::to_string(rank)}};
  }
  if (torchrun || p.max_restarts > 0) env.emplace_back(E::kRestartCount, "0");
  return env;
}

// --env KEY=VALUE for every worker, except variables accel sets itself (those win, with a note).
void addUserEnv(Env& env, LaunchSettings& s, bool first_worker) {
  for (const auto& assignment : s.value("env")) {
    const std::string text = assignment.get<std::string>();
    const std::string name = text.substr(0, text.find('='));
    bool ours = std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
    if (!ours) {
      env.emplace_back(name, text.substr(text.find('=') + 1));
    } else if (first_worker) {
      s.notes.push_back(fmt::format("--env {}: ignored, accel sets {} itself", text, name));
    }
  }
}

// The terminal's settings as this machine applies them: a default input rank on another machine
// means none here; a chosen one is an error where the user would type into this launcher.
void setTerminal(LaunchPlan& p, const LaunchSettings& s, const LaunchFacts& f) {
  const std::string pty = s.text("pty");
  p.pty = pty == "on" ? LaunchPlan::Pty::On : pty == "off" ? LaunchPlan::Pty::Off : LaunchPlan::Pty::Auto;
  p.progress_interval = s.value("progress_interval").get<double>();
  p.stdin_rank = static_cast<int>(s.integer("stdin_rank"));
  if (p.stdin_rank < 0 || machineOfRank(p, p.stdin_rank) == p.machine_rank) return;
  // Where machine 0 settles the layout at the join, the ranks here are a guess: setLayout decides.
  if (s.origin("stdin_rank") != "default" && f.stdin_terminal && !p.world_at_join && p.machine_rank >= 0) {
    throw UsageError(fmt::format("--stdin_rank {}: rank {} runs on machine {}, not on this one (machine {}), whose "
                                 "terminal this is",
                                 p.stdin_rank, p.stdin_rank, machineOfRank(p, p.stdin_rank), p.machine_rank),
                     "give a rank of this machine, or none (the user's input reaches only this machine's ranks)");
  }
  p.stdin_rank = -1;
}

}  // namespace

LaunchPlan makeLaunchPlan(LaunchSettings s, const std::vector<std::string>& argv, const LaunchFacts& f) {
  LaunchPlan p;
  checkSizes(s);  // first: every count below then fits an int
  p.num_machines = static_cast<int>(s.integer("num_machines"));
  p.machine_rank = static_cast<int>(s.integer("machine_rank"));
  const int per_machine = static_cast<int>(s.integer("nproc_per_node"));
  checkCounts(s, f, per_machine);
  checkFsdp(s);
  p.world_at_join = s.flag("world_at_join");
  p.layout = initialLayout(s);
  p.world_size = worldOf(p.layout);
  p.master_addr = s.text("main_process_ip");
  p.master_port = static_cast<int>(s.integer("main_process_port"));
  p.port_is_ours = p.machine_rank == 0;
  p.label_host = p.num_machines > 1 ? f.hostname : "";
  p.max_restarts = static_cast<int>(s.integer("max_restarts"));
  p.grace_period = s.value("grace_period").get<double>();
  p.log_dir = s.text("log_dir");
  checkLogDir(p.log_dir);
  p.line_prefix_template = s.text("log_line_prefix_template");
  p.host = f.hostname;
  p.main_process_port = p.master_port;
  p.job_port = static_cast<int>(s.integer("job_port"));
  p.heartbeat_timeout = s.value("heartbeat_timeout").get<double>();
  p.join_timeout = s.value("join_timeout").get<double>();
  p.hang_timeout = s.value("hang_timeout").get<double>();
  p.stacks_timeout = s.value("stacks_timeout").get<double>();
  setConsoleStreams(p, s);
  setTerminal(p, s, f);
  checkOutputKept(p, s, f);
  const auto identity = runIdentity(s, f);
  p.run_id = identity.first;
  p.token = identity.second;
  const bool torchrun = torchrunShaped(p, s);  // decided once: every worker has the same form
  const Env common = commonEnv(p, s, f, identity, per_machine, torchrun);
  const auto shares = s.flag("enable_cpu_affinity") ? splitCpus(f.usable_cpus, per_machine)
                                                    : std::vector<std::vector<int>>(static_cast<size_t>(per_machine));
  if (s.flag("enable_cpu_affinity") && f.usable_cpus.empty()) {
    s.notes.push_back("warning: enable_cpu_affinity: cannot read the launcher's CPU affinity; workers run unpinned");
  } else if (s.flag("enable_cpu_affinity") && static_cast<size_t>(per_machine) > f.usable_cpus.size()) {
    s.notes.push_back(
        fmt::format("warning: enable_cpu_affinity: {} workers but {} usable CPU(s) ({}); workers share "
                    "CPUs, one each, round robin",
                    per_machine, f.usable_cpus.size(), cpuListText(f.usable_cpus)));
  }
  for (int local = 0; local < per_machine; ++local) {
    WorkerSpec w;
    w.local_rank = local;
    w.rank = firstRankOf(p.layout, std::max(0, p.machine_rank)) + local;
    w.argv = argv;
    w.cpus = shares[static_cast<size_t>(local)];
    w.env = rankEnv(p, w.rank, s.flag("virtual_local_rank") ? 0 : local, torchrun);
    if (s.has("worker_unset")) w.unset = s.value("worker_unset").get<std::vector<std::string>>();
    w.env.insert(w.env.end(), common.begin(), common.end());
    if (s.flag("virtual_local_rank")) put(w.env, launch_env::kCudaVisibleDevices, visibleDevice(s, f, local));
    addUserEnv(w.env, s, local == 0);
    std::sort(w.env.begin(), w.env.end());
    p.workers.push_back(std::move(w));
  }
  p.settings = std::move(s);
  return p;
}

void setMasterPort(LaunchPlan& plan, int port) {
  plan.master_port = port;
  plan.settings.set("main_process_port", port, "free port (configured one busy)");
  for (auto& w : plan.workers) {
    for (auto& [name, value] : w.env) {
      if (name == launch_env::kMasterPort) value = std::to_string(port);
    }
  }
}

void setSocketInterface(LaunchPlan& plan, const std::string& iface, const std::string& local_address,
                        const std::map<std::string, std::string>& launcher_env) {
  std::vector<std::string> set, kept;
  for (const char* name : {launch_env::kGlooSocketIfname, launch_env::kNcclSocketIfname}) {
    if (auto it = launcher_env.find(name); it != launcher_env.end() && !it->second.empty()) {
      kept.push_back(fmt::format("{}={}", name, it->second));
      continue;
    }
    set.push_back(name);
    for (auto& w : plan.workers) w.env.emplace_back(name, iface);
  }
  for (auto& w : plan.workers) std::sort(w.env.begin(), w.env.end());
  std::string note = fmt::format("network: this machine reaches main_process_ip {} from {} on {}", plan.master_addr,
                                 local_address, iface);
  if (!set.empty()) note += "; workers get " + join(set, " and ") + "=" + iface;
  if (!kept.empty()) note += "; kept from the environment: " + join(kept, ", ");
  plan.settings.notes.push_back(note);
}

}  // namespace accel
