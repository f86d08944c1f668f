// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/launch_settings.h"

#include "lib/launch/job_settings.h"
#include "lib/launch/terminal_settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/schema.h"
#include "lib/launch/job_settings.h"
#include "lib/launch/launch_args.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/line_prefix.h"
#include "lib/launch/signal_channel.h"
#include "lib/launch/terminal_settings.h"

namespace accel {

namespace {

using nlohmann::json;

const char* kCli = "command line";
const char* kConfig = "config file";
const char* kDefault = "default";

void checkParadigmFlags(const LaunchOptions& o) {
  std::vector<std::string> given;
  if (o.cpu) given.push_back("--cpu");
  if (o.multi_gpu) given.push_back("--multi_gpu");
  if (o.tpu) given.push_back("--tpu");
  if (o.use_deepspeed) given.push_back("--use_deepspeed");
  if (o.use_fsdp) given.push_back("--use_fsdp");
  if (o.use_megatron_lm) given.push_back("--use_megatron_lm");
  if (given.size() > 1) {
    throw UsageError(
        "you can only use one of --cpu, --multi_gpu, --tpu, --use_deepspeed, "
        "--use_fsdp, --use_megatron_lm at a time, but got " +
        join(given, " and "));
  }
  if (o.tpu) throw UsageError("TPU launches are not supported by accel", "accel launches on NVIDIA GPUs and CPUs");
  if (o.use_parallelism_config && !o.use_fsdp) {
    throw UsageError("--use_parallelism_config needs --use_fsdp with FSDP 2", "add --use_fsdp --fsdp_version 2");
  }
}

struct Resolver {
  const LaunchOptions& o;
  const std::optional<Config>& config;
  const LaunchFacts& facts;
  LaunchSettings& s;

  std::optional<json> cli(const std::string& key) const {
    auto it = o.values.find(key);
    if (it == o.values.end()) return std::nullopt;
    return typedFlagValue(key, it->second);
  }
  const json* file(const std::string& key) const { return config ? config->find(key) : nullptr; }

  // Flag > config > fallback.
  void resolve(const std::string& key, json fallback, const std::string& fallback_origin = kDefault) {
    if (auto v = cli(key)) {
      s.set(key, *v, kCli);
    } else if (const json* c = file(key)) {
      s.set(key, *c, kConfig);
    } else {
      s.set(key, std::move(fallback), fallback_origin);
    }
  }
  // Flag > SLURM > config > fallback: a per-machine config cannot know its node in a SLURM job.
  void resolvePlacement(const std::string& key, const std::optional<json>& from_slurm, json fallback) {
    if (auto v = cli(key)) {
      s.set(key, *v, kCli);
    } else if (from_slurm) {
      s.set(key, *from_slurm, "SLURM");
    } else {
      resolve(key, std::move(fallback));
    }
  }
};

std::string paradigmFromFlags(const LaunchOptions& o) {
  if (o.use_deepspeed) return "DEEPSPEED";
  if (o.use_fsdp) return "FSDP";
  if (o.use_megatron_lm) return "MEGATRON_LM";
  if (o.multi_gpu) return "MULTI_GPU";
  return "";
}

void resolveType(Resolver& r, const std::optional<SlurmInfo>& slurm) {
  const LaunchOptions& o = r.o;
  std::string type = paradigmFromFlags(o);
  if (!type.empty()) {
    r.s.set("distributed_type", type, kCli);
  } else if (const json* c = r.file("distributed_type"); c && !o.cpu) {
    r.s.set("distributed_type", *c, kConfig);
  } else {
    // Like Accelerate without a config: several GPUs turn on multi-GPU, unless one process asked.
    auto asked = r.cli("num_processes");
    bool several_gpus = r.facts.visible_gpus > 1 || (slurm && slurm->gpus_on_node.value_or(0) > 1);
    bool gpu = !o.cpu && several_gpus && !(asked && *asked == 1);
    type = gpu ? "MULTI_GPU" : (asked && *asked > 1 ? "MULTI_CPU" : "NO");
    r.s.set("distributed_type", type, o.cpu ? "--cpu" : "GPU probe");
  }
  type = r.s.text("distributed_type");
  static const std::vector<std::string> launchable = {"NO",        "MULTI_CPU", "MULTI_GPU",
                                                      "DEEPSPEED", "FSDP",      "MEGATRON_LM"};
  if (std::find(launchable.begin(), launchable.end(), type) == launchable.end()) {
    throw UsageError("distributed_type " + type + " cannot be launched by accel",
                     "accel launches NVIDIA GPU (MULTI_GPU, DEEPSPEED, FSDP, MEGATRON_LM) and CPU "
                     "(NO, MULTI_CPU) jobs");
  }
  if (o.cpu) {
    r.s.set("use_cpu", true, kCli);
  } else if (const json* c = r.file("use_cpu"); c && *c == true) {
    r.s.set("use_cpu", true, kConfig);
  } else if (type == "MULTI_CPU") {
    r.s.set("use_cpu", true, "distributed_type");
  } else if (r.facts.visible_gpus == 0 && !isGpuType(type)) {
    r.s.set("use_cpu", true, "GPU probe");
  } else {
    r.s.set("use_cpu", false, r.file("use_cpu") ? kConfig : kDefault);
  }
}

void resolvePlacement(Resolver& r, const std::optional<SlurmInfo>& slurm) {
  std::map<std::string, json> from_slurm;
  if (slurm) {
    from_slurm["num_machines"] = slurm->num_nodes;
    from_slurm["machine_rank"] = slurm->node_rank;
    if (!slurm->first_host.empty()) from_slurm["main_process_ip"] = slurm->first_host;
  }
  for (const auto& spec : configSchema()) {
    if (!spec.placement) continue;
    const std::string key(spec.path);
    auto it = from_slurm.find(key);
    r.resolvePlacement(key, it == from_slurm.end() ? std::nullopt : std::optional<json>(it->second),
                       launchDefault(spec));
  }
  if (slurm) {
    r.s.notes.push_back(
        fmt::format("SLURM job {}: machine_rank {} of {} machines, main_process_ip {}{}", slurm->job_id,
                    r.s.integer("machine_rank"), r.s.integer("num_machines"), r.s.text("main_process_ip"),
                    slurm->gpus_on_node ? fmt::format(", {} GPUs on this node", *slurm->gpus_on_node) : ""));
    if (!slurm->in_step && slurm->num_nodes > 1) {
      r.s.notes.push_back(
          "not inside `srun`: run one `accel launch` per node with srun "
          "(see scripts/slurm/sbatch_2x8.sh)");
    }
  }
}

void resolveProcessCount(Resolver& r, const std::optional<SlurmInfo>& slurm) {
  const long long machines = r.s.integer("num_machines");
  if (auto v = r.cli("num_processes")) return r.s.set("num_processes", *v, kCli);
  if (const json* c = r.file("num_processes")) return r.s.set("num_processes", *c, kConfig);
  long long per_machine = 1;
  std::string origin = r.s.flag("use_cpu") ? kDefault : "GPU probe";
  if (slurm && slurm->gpus_on_node && !r.s.flag("use_cpu")) {
    per_machine = std::max(1LL, *slurm->gpus_on_node);
    origin = "SLURM";
  } else if (!r.s.flag("use_cpu")) {
    per_machine = std::max(1, r.facts.visible_gpus);
  }
  long long total = 0;
  if (__builtin_mul_overflow(per_machine, machines, &total)) {  // a config's num_machines can be huge
    throw UsageError(
        fmt::format("num_machines {} ({}) is more than accel can launch", machines, r.s.origin("num_machines")));
  }
  r.s.set("num_processes", total, origin);
}

void resolveParallelism(Resolver& r) {
  const json* file = r.file("parallelism_config");
  if (r.o.use_parallelism_config) {
    r.s.set("use_parallelism_config", true, kCli);
  } else if (file && file->is_object() && !file->empty() && r.s.text("distributed_type") == "FSDP") {
    r.s.set("use_parallelism_config", true, kConfig);  // as Accelerate: a non-empty section turns it on
  }
}

// Every other row that `accel launch` uses (a flag, a launch default or an export), in table
// order: flag > config > launch default.
void resolveRest(Resolver& r) {
  resolveParallelism(r);
  for (const auto& spec : configSchema()) {
    const std::string key(spec.path);
    if (r.s.has(key) || spec.type == ValueType::Map || (spec.flag.empty() && spec.exports.empty())) continue;
    if (auto v = r.cli(key)) {
      r.s.set(key, *v, kCli);
    } else if (const json* c = r.file(key)) {
      r.s.set(key, *c, kConfig);
    } else if (!spec.launch_default.empty() && exportApplies(spec.export_when, r.s)) {
      r.s.set(key, launchDefault(spec), kDefault);
    }
  }
  // Keys a section accepts as written (its open_prefix: megatron_lm_*, parallelism_config_*)
  // apply from the file too.
  for (const auto& map : configSchema()) {
    const json* m = map.open_prefix.empty() ? nullptr : r.file(std::string(map.path));
    if (!m || !m->is_object()) continue;
    for (const auto& [k, v] : m->items()) {
      const std::string key = std::string(map.path) + "." + k;
      if (!r.s.has(key)) r.s.set(key, v, kConfig);
    }
  }
  if (r.s.text("rdzv_backend") != "static") {
    r.s.notes.push_back("rdzv_backend " + r.s.text("rdzv_backend") +
                        ": accel's rendezvous is static (rank 0 hosts the store at "
                        "main_process_ip:main_process_port); elastic membership is not supported");
  }
  if (r.s.flag("downcast_bf16") && r.s.origin("downcast_bf16") == kCli) {
    r.s.notes.push_back("--downcast_bf16 applies to TPUs only (XLA_DOWNCAST_BF16), as in Accelerate: ignored");
  }
}

void resolveLauncherOptions(Resolver& r) {
  const LaunchOptions& o = r.o;
  auto set = [&](const std::string& key, const auto& opt, json fallback) {
    if (opt) {
      r.s.set(key, *opt, kCli);
    } else {
      r.s.set(key, std::move(fallback), kDefault);
    }
  };
  set("max_restarts", o.max_restarts, 0);
  set("grace_period", o.grace_period, defaults::kGracePeriodSeconds);
  set("role", o.role, "default");
  set("tee", o.tee, "3");
  set("log_dir", o.log_dir, nullptr);
  set("local_ranks_filter", o.local_ranks_filter, nullptr);
  set("rdzv_token", o.rdzv_token, nullptr);
  if (o.signals_to_handle) checkSignalsToHandle(*o.signals_to_handle);
  set("signals_to_handle", o.signals_to_handle, launch_env::kHandledSignals);
  if (!o.env.empty()) r.s.set("env", o.env, kCli);
  if (o.monitor_interval) {
    r.s.notes.push_back("--monitor_interval ignored: accel notices worker exits as they happen");
  }
  if (o.num_cpu_threads_per_process) {
    r.s.set("num_cpu_threads_per_process", *o.num_cpu_threads_per_process, kCli);
  } else if (auto it = r.facts.env.find(launch_env::kOmpNumThreads); it != r.facts.env.end() && parseInt(it->second)) {
    r.s.set("num_cpu_threads_per_process", *parseInt(it->second), "environment");
  } else {
    long long local = std::max(1LL, r.s.integer("num_processes") / std::max(1LL, r.s.integer("num_machines")));
    r.s.set("num_cpu_threads_per_process", std::max(1LL, r.facts.physical_cores / local), kDefault);
  }
}

std::string configLine(const LaunchSettings& s, const std::string& looked_at, bool skipped_for_cpu) {
  if (s.config_path) return "using config file " + *s.config_path;
  std::vector<std::string> defaults;
  for (const char* key : {"num_processes", "num_machines", "mixed_precision", "distributed_type"}) {
    if (s.origin(key) != kCli) defaults.push_back(fmt::format("{}={} ({})", key, s.text(key), s.origin(key)));
  }
  std::string why =
      skipped_for_cpu ? "--cpu skips the default config file " + looked_at : "no config file at " + looked_at;
  return why + (defaults.empty() ? "" : "; defaults: " + join(defaults, ", "));
}

}  // namespace

LaunchSettings resolveLaunchSettings(const LaunchOptions& o, const std::optional<Config>& config,
                                     const std::string& looked_at, const LaunchFacts& facts) {
  checkParadigmFlags(o);
  LaunchSettings s;
  if (config) s.config_path = config->path;
  Resolver r{o, config, facts, s};
  auto slurm = detectSlurm(facts.env);
  resolveType(r, slurm);
  resolvePlacement(r, slurm);
  resolveProcessCount(r, slurm);
  resolveRest(r);
  resolveLauncherOptions(r);
  resolveJobChannel(s, o, facts);
  resolveTerminal(s, o, facts);
  resolveLinePrefixTemplate(s, o, facts);
  s.config_line = configLine(s, looked_at, o.cpu && o.config_file.empty() && facts.default_config_exists);
  return s;
}

}  // namespace accel
