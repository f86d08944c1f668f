// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/launch_settings.h"

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
#include "lib/launch/placement_settings.h"
#include "lib/launch/signal_channel.h"
#include "lib/launch/terminal_settings.h"
#include "lib/launch/torchrun_args.h"

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
    // torchrun's --nproc_per_node cpu asks for CPU workers as --cpu does.
    const bool cpu = o.cpu || o.nproc_per_node == "cpu";
    auto asked = r.cli("num_processes");
    if (auto n = o.nproc_per_node ? parseInt(*o.nproc_per_node) : std::nullopt; !asked && n) asked = *n;
    bool several_gpus = r.facts.visible_gpus > 1 || (slurm && slurm->gpus_on_node.value_or(0) > 1);
    bool gpu = !cpu && several_gpus && !(asked && *asked == 1);
    type = gpu ? "MULTI_GPU" : (asked && *asked > 1 ? "MULTI_CPU" : "NO");
    r.s.set("distributed_type", type, o.cpu ? "--cpu" : cpu ? "--nproc_per_node cpu" : "GPU probe");
  }
  type = r.s.text("distributed_type");
  static const std::vector<std::string> launchable = {"NO",        "MULTI_CPU", "MULTI_GPU",
                                                      "DEEPSPEED", "FSDP",      "MEGATRON_LM"};
  if (std::find(launchable.begin(), launchable.end(), type) == launchable.end()) {
    throw UsageError("distributed_type " + type + " cannot be launched by accel",
                     "accel launches NVIDIA GPU (MULTI_GPU, DEEPSPEED, FSDP, MEGATRON_LM) and CPU "
                     "(NO, MULTI_CPU) jobs");
  }
  if (o.cpu || (o.nproc_per_node == "cpu" && !isGpuType(type))) {
    r.s.set("use_cpu", true, o.cpu ? kCli : "--nproc_per_node cpu");
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
    } else if (auto e = r.o.env_values.find(key); e != r.o.env_values.end()) {
      r.s.set(key, typedFlagValue(key, e->second), "PET_" + toUpper(key));
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
      auto it = o.origins.find(key);
      r.s.set(key, *opt, it == o.origins.end() ? kCli : it->second);
    } else {
      r.s.set(key, std::move(fallback), kDefault);
    }
  };
  set("max_restarts", o.max_restarts, 0);
  set("grace_period", o.grace_period, defaults::kGracePeriodSeconds);
  set("role", o.role, "default");
  if (o.role && (o.role->empty() || o.role->size() > 64)) {
    throw UsageError(fmt::format("--role '{}': a role is a name of 1 to 64 bytes", *o.role), "e.g. --role trainer");
  }
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
    const long long local = std::max(1LL, r.s.integer("nproc_per_node"));
    if (o.torchrun) {  // torchrun's: 1 for several workers, else the workers' own default
      if (local > 1) r.s.set("num_cpu_threads_per_process", 1, kDefault);
    } else {
      r.s.set("num_cpu_threads_per_process", std::max(1LL, r.facts.physical_cores / local), kDefault);
    }
  }
}

std::string configLine(const LaunchSettings& s, const std::string& looked_at, bool skipped_for_cpu) {
  if (s.flag("torchrun")) return "";  // torchrun reads no config file
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

LaunchSettings resolveLaunchSettings(const LaunchOptions& options, const std::optional<Config>& config,
                                     const std::string& looked_at, const LaunchFacts& facts) {
  LaunchOptions o = options;
  applyTorchrunEnv(o, facts.env);
  checkParadigmFlags(o);
  LaunchSettings s;
  if (config) s.config_path = config->path;
  Resolver r{o, config, facts, s};
  auto slurm = detectSlurm(facts.env);
  resolveType(r, slurm);
  resolvePlacement(s, o, config, facts, slurm);
  resolveRest(r);
  resolveLauncherOptions(r);
  resolveTorchrunOptions(s, o);
  resolveJobChannel(s, o, facts);
  resolveTerminal(s, o, facts);
  resolveLinePrefixTemplate(s, o, facts);
  s.config_line = configLine(s, looked_at, o.cpu && o.config_file.empty() && facts.default_config_exists);
  return s;
}

}  // namespace accel
