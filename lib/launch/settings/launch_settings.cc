// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/launch_settings.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/config/schema.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/settings/job_settings.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/line_prefix.h"
#include "lib/launch/settings/paradigm.h"
#include "lib/launch/settings/placement_settings.h"
#include "lib/launch/settings/terminal_settings.h"
#include "lib/launch/settings/torchrun_args.h"
#include "lib/launch/settings/watch_settings.h"

namespace accel::launch::settings {

namespace {

using nlohmann::json;

// Schema keys that LaunchSettings carries as typed fields (the paradigm and the placement).
constexpr std::string_view kTypedKeys[] = {"distributed_type", "use_cpu",         "num_processes",    "num_machines",
                                           "machine_rank",     "main_process_ip", "main_process_port"};

bool typedKey(std::string_view key) {
  return std::find(std::begin(kTypedKeys), std::end(kTypedKeys), key) != std::end(kTypedKeys);
}

// Every other row that `accel launch` uses (a flag, a launch default or an export), in table
// order: flag > PET_* > config > launch default; then the keys a section accepts as written
// (its open_prefix: megatron_lm_*, parallelism_config_*) from the file.
void resolveKeys(LaunchSettings& s, const LaunchOptions& o, const std::optional<Config>& config) {
  auto file = [&](const std::string& key) { return config ? config->find(key) : nullptr; };
  for (const auto& spec : configSchema()) {
    const std::string key(spec.path);
    if (typedKey(key) || spec.type == ValueType::Map || (spec.flag.empty() && spec.exports.empty())) continue;
    if (auto v = o.values.find(key); v != o.values.end()) {
      s.keys.set(key, v->second, fromCommandLine());
    } else if (auto e = o.env_values.find(key); e != o.env_values.end()) {
      s.keys.set(key, typedFlagValue(key, e->second), {Source::Torchrun, torchrunVariable(key)});
    } else if (const json* c = file(key)) {
      s.keys.set(key, *c, fromConfigFile());
    } else if (!spec.launch_default.empty() && exportApplies(spec.export_when, s)) {
      s.keys.set(key, launchDefault(spec), fromDefault());
    }
  }
  for (const auto& map : configSchema()) {
    const json* m = map.open_prefix.empty() ? nullptr : file(std::string(map.path));
    if (!m || !m->is_object()) continue;
    for (const auto& [k, v] : m->items()) {
      const std::string key = std::string(map.path) + "." + k;
      if (!s.keys.has(key)) s.keys.set(key, v, fromConfigFile());
    }
  }
  const std::string backend = s.keys.text("rdzv_backend");
  if (backend != "static" && backend != "etcd" && backend != "etcd-v2") {  // etcd's note: placement_settings.cc
    s.notes.push_back("rdzv_backend " + backend +
                      ": machine 0's launcher (the endpoint's machine) holds the rendezvous and the store at "
                      "main_process_ip:main_process_port; other machines may come and go, losing machine 0 ends "
                      "the job (--rdzv_backend etcd elects another)");
  }
  if (s.keys.flag("downcast_bf16") && s.keys.origin("downcast_bf16").source == Source::CommandLine) {
    s.notes.push_back("--downcast_bf16 applies to TPUs only (XLA_DOWNCAST_BF16), as in Accelerate: ignored");
  }
}

// A --log_dir that exists and is not a directory is a usage error found before any worker
// starts, not a failure to open a file once they run.
void checkLogDir(const std::string& log_dir) {
  std::error_code ec;
  if (log_dir.empty() || !std::filesystem::exists(log_dir, ec) || std::filesystem::is_directory(log_dir, ec)) return;
  throw UsageError(fmt::format("--log_dir {} is a file, not a directory", log_dir),
                   "give a directory (made if missing) for the workers' log folders");
}

template <class T>
Setting<T> flagOr(const LaunchOptions& o, const std::optional<T>& flag, const char* name, T fallback) {
  if (!flag) return {std::move(fallback), fromDefault()};
  auto it = o.origins.find(name);
  return {*flag, it == o.origins.end() ? fromCommandLine() : Origin{Source::Torchrun, it->second}};
}

template <class T>
Setting<std::optional<T>> optionalFlag(const LaunchOptions& o, const std::optional<T>& flag, const char* name) {
  if (!flag) return {std::nullopt, fromDefault()};
  auto it = o.origins.find(name);
  return {flag, it == o.origins.end() ? fromCommandLine() : Origin{Source::Torchrun, it->second}};
}

// OMP_NUM_THREADS: the flag, the launcher's own, else physical cores over the local workers
// (torchrun's: 1 for several workers, else the workers' own default).
Setting<std::optional<long long>> cpuThreads(const LaunchSettings& s, const LaunchOptions& o, const facts::Machine& f) {
  if (o.num_cpu_threads_per_process) return {*o.num_cpu_threads_per_process, fromCommandLine()};
  if (auto v = parseInt(f.variable(launch_env::kOmpNumThreads))) return {*v, fromEnvironment()};
  const long long local = std::max(1LL, s.placement.nproc_per_node.value);
  if (o.torchrun) return {local > 1 ? std::optional<long long>(1) : std::nullopt, fromDefault()};
  if (o.deepspeed_env)
    return {std::nullopt, fromDefault()};  // DeepSpeed's launcher sets none (--bind_cores_to_rank aside)
  return {std::max(1LL, f.physical_cores / local), fromDefault()};
}

// --numa-binding's mode (torchrun's words), else enable_cpu_affinity's on a GPU job: Accelerate
// pins each worker to its GPU's NUMA node (NVML's CPU affinity), torchrun's `node`. A CPU job's
// enable_cpu_affinity keeps its own contiguous shares (plan/cpu_affinity.h).
Setting<std::optional<std::string>> numaBinding(const LaunchSettings& s, const LaunchOptions& o,
                                                const facts::Machine& f) {
  if (o.numa_binding) {
    static const std::vector<std::string> modes = {"node", "socket", "exclusive", "core-complex"};
    if (std::find(modes.begin(), modes.end(), *o.numa_binding) == modes.end()) {
      throw UsageError(fmt::format("--numa-binding '{}' is not a mode", *o.numa_binding),
                       "choose node, socket, exclusive or core-complex (torchrun's modes)");
    }
    return optionalFlag(o, o.numa_binding, "numa_binding");
  }
  if (s.keys.flag("enable_cpu_affinity") && !s.paradigm.use_cpu.value && f.visible_gpus > 0) {
    return {std::string("node"), derivedFrom("enable_cpu_affinity")};
  }
  return {std::nullopt, fromDefault()};
}

// The restart policy's rules (job/restart_policy.h); the flags' rows bound the counts.
void resolveRestartPolicy(Supervision& sv, const LaunchOptions& o) {
  const auto on_hang = flagOr<std::string>(o, o.on_hang, "on_hang", "restart");
  if (on_hang.value != "restart" && on_hang.value != "end") {
    throw UsageError(
        fmt::format("--on_hang '{}' is not restart or end", on_hang.value),
        "--on_hang restart restarts a hung round (where --max_restarts allows), --on_hang end ends the job");
  }
  sv.restart_hangs = {on_hang.value == "restart", on_hang.origin};
  sv.startup_timeout = flagOr(o, o.startup_timeout, "startup_timeout", 30.0);
  if (!(sv.startup_timeout.value >= 0) || sv.startup_timeout.value > 1e9) {
    throw UsageError(
        fmt::format("--startup_timeout {:g} is not a number of seconds (0 for none)", sv.startup_timeout.value),
        "e.g. --startup_timeout 60");
  }
  const auto startup = flagOr<long long>(o, o.max_startup_failures, "max_startup_failures", 3);
  sv.max_startup_failures = {static_cast<int>(startup.value), startup.origin};
  const auto machine = flagOr<long long>(o, o.max_machine_failures, "max_machine_failures", 3);
  sv.max_machine_failures = {static_cast<int>(machine.value), machine.origin};
  const auto idle = flagOr<long long>(o, o.max_no_progress_restarts, "max_no_progress_restarts", 3);
  sv.max_no_progress_restarts = {static_cast<int>(idle.value), idle.origin};
  sv.gpu_free_timeout = flagOr(o, o.gpu_free_timeout, "gpu_free_timeout", 30.0);
  if (!(sv.gpu_free_timeout.value >= 0) || sv.gpu_free_timeout.value > 1e9) {
    throw UsageError(
        fmt::format("--gpu_free_timeout {:g} is not a number of seconds (0 for no wait)", sv.gpu_free_timeout.value),
        "e.g. --gpu_free_timeout 60");
  }
}

void resolveLauncherOptions(LaunchSettings& s, const LaunchOptions& o, const facts::Machine& f) {
  Supervision& sv = s.supervision;
  const auto restarts = flagOr<long long>(o, o.max_restarts, "max_restarts", 0);  // the flag's row bounds it
  sv.max_restarts = {static_cast<int>(restarts.value), restarts.origin};
  resolveRestartPolicy(sv, o);
  sv.grace_period = flagOr(o, o.grace_period, "grace_period", defaults::kGracePeriodSeconds);
  sv.role = flagOr<std::string>(o, o.role, "role", "default");
  if (o.role && (o.role->empty() || o.role->size() > 64)) {
    throw UsageError(fmt::format("--role '{}': a role is a name of 1 to 64 bytes", *o.role), "e.g. --role trainer");
  }
  if (o.signals_to_handle) checkSignalsToHandle(*o.signals_to_handle);
  sv.signals_to_handle = flagOr<std::string>(o, o.signals_to_handle, "signals_to_handle", launch_env::kHandledSignals);
  sv.env = o.env;
  sv.cpu_threads = cpuThreads(s, o, f);
  sv.numa_binding = numaBinding(s, o, f);
  sv.deepspeed_env = {o.deepspeed_env, o.deepspeed_env ? fromCommandLine("--deepspeed_env") : fromDefault()};
  sv.local_rank_arg = {o.local_rank_arg, o.local_rank_arg ? fromCommandLine("--local_rank_arg") : fromDefault()};
  if (o.bind_core_list && !o.bind_cores_to_rank) {
    throw UsageError("--bind_core_list names the cores --bind_cores_to_rank shares out", "add --bind_cores_to_rank");
  }
  if (o.bind_cores_to_rank) sv.bind_cores = {o.bind_core_list.value_or(""), fromCommandLine("--bind_cores_to_rank")};
  Output& out = s.output;
  out.tee = flagOr<std::string>(o, o.tee, "tee", "3");
  out.log_dir = optionalFlag(o, o.log_dir, "log_dir");
  if (out.log_dir.value) checkLogDir(*out.log_dir.value);
  out.each_rank_log = optionalFlag(o, o.enable_each_rank_log, "enable_each_rank_log");
  if (out.each_rank_log.value) {
    std::error_code ec;
    const std::string& dir = *out.each_rank_log.value;
    if (dir.empty() || (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))) {
      throw UsageError(fmt::format("{} should not be a file, it should be a directory.", dir),  // DeepSpeed's words
                       "give --enable_each_rank_log a directory (made if missing)");
    }
    if (out.log_dir.value) {
      throw UsageError("--enable_each_rank_log and --log_dir are two layouts of the workers' log files",
                       "keep one of them");
    }
  }
  out.local_ranks_filter = optionalFlag(o, o.local_ranks_filter, "local_ranks_filter");
  out.copy_filters[0] = optionalFlag(o, o.duplicate_stdout_filters, "duplicate_stdout_filters");
  out.copy_filters[1] = optionalFlag(o, o.duplicate_stderr_filters, "duplicate_stderr_filters");
  for (int i = 0; i < 2; ++i) {
    if (out.copy_filters[i].value && !out.log_dir.value && !s.torchrun.grammar.value) {
      throw UsageError(fmt::format("--duplicate_{}_filters writes its copy in --log_dir's attempt folders, and no "
                                   "--log_dir is given",
                                   i == 0 ? "stdout" : "stderr"),
                       "add --log_dir DIR (accel torchrun, as torchrun, writes it in a temporary folder without one)");
    }
  }
  s.identity.token = optionalFlag(o, o.rdzv_token, "rdzv_token");
  if (o.monitor_interval) s.notes.push_back("--monitor_interval ignored: accel notices worker exits as they happen");
}

// One short line: the settings that came from neither the command line nor a default, with
// their sources, then the defaults taken.
std::string configLine(const LaunchSettings& s, const std::string& looked_at, bool skipped_for_cpu) {
  if (s.torchrun.grammar.value || s.supervision.deepspeed_env.value) return "";  // they read no config file
  if (s.config_path) return "using config file " + *s.config_path;
  std::vector<std::string> decided, defaults;
  auto add = [&](const char* key, const std::string& value, const Origin& origin) {
    if (origin.source == Source::Default) defaults.push_back(fmt::format("{}={}", key, value));
    if (origin.source != Source::Default && origin.source != Source::CommandLine) {
      decided.push_back(fmt::format("{}={} ({})", key, value, origin.text()));
    }
  };
  const Placement& p = s.placement;
  add("num_processes", std::to_string(p.num_processes.value), p.num_processes.origin);
  add("num_machines", std::to_string(p.num_machines.value), p.num_machines.origin);
  add("mixed_precision", s.keys.text("mixed_precision"), s.keys.origin("mixed_precision"));
  add("distributed_type", s.paradigm.distributed_type.value, s.paradigm.distributed_type.origin);
  // The workers' ACCELERATE_USE_CPU where only the machine decided it (distributed_type NO says nothing of it).
  if (s.paradigm.use_cpu.value && s.paradigm.use_cpu.origin.source == Source::Machine) {
    add("use_cpu", "True", s.paradigm.use_cpu.origin);
  }
  std::string line = skipped_for_cpu ? "--cpu: config file not read" : "no config file at " + looked_at;
  if (!decided.empty()) line += "; " + join(decided, ", ");
  if (!defaults.empty()) line += "; defaults: " + join(defaults, ", ");
  return line;
}

}  // namespace

bool Paradigm::gpus() const { return isGpuType(distributed_type.value); }

LaunchSettings resolveLaunchSettings(const LaunchOptions& options, const std::optional<Config>& config,
                                     const std::string& looked_at, const facts::Facts& facts, const HeadPlace* place) {
  const facts::Machine& f = facts.machine;
  LaunchOptions o = options;
  applyTorchrunEnv(o, f.env);
  checkParadigmFlags(o);
  LaunchSettings s;
  if (config) s.config_path = config->path;
  s.dry_run = o.dry_run && !place;  // a head never sends a dry run
  s.quiet = o.quiet;
  s.from_head = place != nullptr;
  s.command = o.command;
  s.words = o.words;
  s.program_form = {o.module, o.no_python, o.python, env::kPath.in(f.env)};
  s.paradigm = resolveParadigm(o, config, f, s.notes);
  s.torchrun.grammar = {o.torchrun, fromCommandLine(o.torchrun ? "accel torchrun" : "accel launch")};
  s.placement = resolvePlacement(s, o, config, facts, place, s.notes);
  resolveKeys(s, o, config);
  if (place && !place->gpu_ids.empty()) s.keys.set("gpu_ids", place->gpu_ids, {Source::Head, {}});
  resolveLauncherOptions(s, o, f);
  resolveTorchrunOptions(s, o);
  if (place) {
    s.identity.token = {place->token, {Source::Head, {}}};
    s.identity.run_id = {place->run_id, {Source::Head, {}}};
  }
  s.channel = resolveJobChannel(s.placement, o, f, s.notes);
  s.watching = resolveWatching(o, f);
  resolveTerminal(s.output, s.placement.num_processes.value, o, f);
  if (place) s.output.stdin_rank = {-1, {Source::Head, {}}};  // the user types into the head's terminal only
  s.output.line_prefix_template = resolveLinePrefixTemplate(o, f);
  s.config_line = configLine(s, looked_at, o.cpu && o.config_file.empty() && f.default_config_exists);
  s.hosts = resolveHosts(s, o, f.env);
  if ((o.launcher_args || o.venv_script) && s.hosts.how == Hosts::How::None && !place) {
    throw UsageError(fmt::format("{} applies where accel starts the hosts of a hostfile, and this launch runs on this "
                                 "machine only",
                                 o.launcher_args ? "--launcher_args" : "--venv_script"),
                     "add --hostfile FILE with a launcher that starts them, or drop the flag");
  }
  if (o.deepspeed_env && !o.config_file.empty()) {
    throw UsageError("--deepspeed_env reads no config file, as DeepSpeed's launcher reads none",
                     "drop --config_file (the script reads its DeepSpeed config itself)");
  }
  return s;
}

bool exportApplies(ExportWhen when, const LaunchSettings& s) {
  const std::string& type = s.paradigm.distributed_type.value;
  const bool parallelism = s.paradigm.use_parallelism_config.value;
  switch (when) {
    case ExportWhen::Always: return true;
    case ExportWhen::DeepSpeed: return type == "DEEPSPEED";
    case ExportWhen::NotDeepSpeed: return type != "DEEPSPEED";
    case ExportWhen::Fsdp: return type == "FSDP";
    case ExportWhen::MegatronLm: return type == "MEGATRON_LM";
    case ExportWhen::Fp8: return s.keys.text("mixed_precision") == "fp8";
    case ExportWhen::Parallelism: return parallelism;
    case ExportWhen::ContextParallel:
      return parallelism && s.keys.integer("parallelism_config.parallelism_config_cp_size") > 1;
    case ExportWhen::SequenceParallel:
      return parallelism && s.keys.integer("parallelism_config.parallelism_config_sp_size") > 1;
  }
  return false;
}

bool isGpuType(const std::string& t) {
  return t == "MULTI_GPU" || t == "DEEPSPEED" || t == "FSDP" || t == "MEGATRON_LM";
}

}  // namespace accel::launch::settings
