// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/paradigm.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/settings/slurm.h"

namespace accel::launch::settings {

namespace {

using nlohmann::json;

std::string paradigmFromFlags(const LaunchOptions& o) {
  if (o.use_deepspeed) return "DEEPSPEED";
  if (o.use_fsdp) return "FSDP";
  if (o.use_megatron_lm) return "MEGATRON_LM";
  if (o.multi_gpu) return "MULTI_GPU";
  return "";
}

Origin gpuProbe(const facts::Machine& f) {
  return {Source::Machine,
          f.visible_gpus == 0 ? "GPU probe: none visible" : fmt::format("GPU probe: {} visible", f.visible_gpus)};
}

// Like Accelerate without a config: several GPUs turn on multi-GPU, unless one process asked.
// torchrun's --nproc_per_node cpu asks for CPU workers as --cpu does. Without GPUs, a job of
// several processes in all (torchrun's count is per machine) is MULTI_CPU, as its workers see it.
Setting<std::string> probedType(const LaunchOptions& o, const facts::Machine& f) {
  const bool cpu = o.cpu || o.nproc_per_node == "cpu";
  std::optional<long long> asked, machines;
  if (auto it = o.values.find("num_processes"); it != o.values.end()) asked = it->second.get<long long>();
  if (auto it = o.values.find("num_machines"); it != o.values.end()) machines = it->second.get<long long>();
  if (!machines && o.nnodes) machines = parseInt(*o.nnodes);
  std::optional<long long> total = asked;
  if (!asked && o.nproc_per_node) {
    asked = parseInt(*o.nproc_per_node);
    if (asked) total = *asked * machines.value_or(1);
  }
  const auto slurm = detectSlurm(f.env);
  const bool several_gpus = f.visible_gpus > 1 || (slurm && slurm->gpus_on_node.value_or(0) > 1);
  const bool gpu = !cpu && several_gpus && !(asked && *asked == 1);
  const Origin origin = o.cpu ? fromCommandLine("--cpu") : cpu ? fromCommandLine("--nproc_per_node cpu") : gpuProbe(f);
  return {gpu ? "MULTI_GPU" : (total && *total > 1 ? "MULTI_CPU" : "NO"), origin};
}

Setting<std::string> resolveType(const LaunchOptions& o, const std::optional<Config>& config, const facts::Machine& f) {
  const json* file = config ? config->find("distributed_type") : nullptr;
  Setting<std::string> type = !paradigmFromFlags(o).empty()
                                  ? Setting<std::string>{paradigmFromFlags(o), fromCommandLine()}
                              : file && !o.cpu ? Setting<std::string>{file->get<std::string>(), fromConfigFile()}
                                               : probedType(o, f);
  static const std::vector<std::string> launchable = {"NO",        "MULTI_CPU", "MULTI_GPU",
                                                      "DEEPSPEED", "FSDP",      "MEGATRON_LM"};
  if (std::find(launchable.begin(), launchable.end(), type.value) == launchable.end()) {
    throw UsageError("distributed_type " + type.value + " cannot be launched by accel",
                     "accel launches NVIDIA GPU (MULTI_GPU, DEEPSPEED, FSDP, MEGATRON_LM) and CPU "
                     "(NO, MULTI_CPU) jobs");
  }
  return type;
}

// ACCELERATE_USE_CPU as Accelerate's launchers say it: only its simple launcher (NO, MULTI_CPU,
// --cpu) reads use_cpu; DeepSpeed's and torchrun's (MULTI_GPU, FSDP, MEGATRON_LM) export none
// whatever the file says, and their workers use GPUs where there are any.
Setting<bool> resolveUseCpu(const std::string& type, const LaunchOptions& o, const std::optional<Config>& config,
                            const facts::Machine& f) {
  const json* file = config ? config->find("use_cpu") : nullptr;
  if (o.cpu || (o.nproc_per_node == "cpu" && !isGpuType(type))) {
    return {true, o.cpu ? fromCommandLine() : fromCommandLine("--nproc_per_node cpu")};
  }
  if (isGpuType(type)) return {false, derivedFrom("distributed_type")};
  if (file && *file == true) return {true, fromConfigFile()};
  if (type == "MULTI_CPU") return {true, derivedFrom("distributed_type")};
  if (file) return {false, fromConfigFile()};  // as the file says, GPUs or not (the worker falls back to the CPU)
  if (f.visible_gpus == 0) return {true, gpuProbe(f)};
  return {false, fromDefault()};
}

// What Accelerate's launcher does without a word and a user may not expect, said once each.
void paradigmNotes(const Paradigm& p, const LaunchOptions& o, const std::optional<Config>& config,
                   const facts::Machine& f, std::vector<std::string>& notes) {
  const json* file_type = config ? config->find("distributed_type") : nullptr;
  const std::string& type = p.distributed_type.value;
  if (o.cpu && file_type && file_type->is_string() && isGpuType(file_type->get<std::string>()) &&
      *file_type != "MULTI_GPU") {
    notes.push_back(fmt::format(
        "--cpu: the config file's distributed_type {0} is not used: the workers run as plain CPU processes without "
        "{0}'s settings, as under `accelerate launch --cpu`; drop --cpu to run {0} (without GPUs its workers use the "
        "CPU)",
        file_type->get<std::string>()));
  }
  if (!isGpuType(type)) return;
  const json* file_cpu = config ? config->find("use_cpu") : nullptr;
  if (file_cpu && *file_cpu == true && !o.cpu) {
    notes.push_back(fmt::format(
        "use_cpu: true (config file) is not read for distributed_type {}: Accelerate's {} launcher ignores it and "
        "exports no ACCELERATE_USE_CPU, so the workers use GPUs where there are any",
        type, type == "DEEPSPEED" ? "DeepSpeed" : "torchrun"));
  }
  if (f.visible_gpus == 0) {
    notes.push_back(fmt::format(
        "no GPU visible (`accel env` says why): distributed_type {}'s workers start as under accelerate launch and "
        "run on the CPU (the script picks a CPU backend such as gloo)",
        type));
  }
}

}  // namespace

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

Paradigm resolveParadigm(const LaunchOptions& o, const std::optional<Config>& config, const facts::Machine& f,
                         std::vector<std::string>& notes) {
  Paradigm p;
  p.distributed_type = resolveType(o, config, f);
  p.use_cpu = resolveUseCpu(p.distributed_type.value, o, config, f);
  const json* section = config ? config->find("parallelism_config") : nullptr;
  if (o.use_parallelism_config) {
    p.use_parallelism_config = {true, fromCommandLine()};
  } else if (section && section->is_object() && !section->empty() && p.distributed_type.value == "FSDP") {
    p.use_parallelism_config = {true, fromConfigFile()};  // as Accelerate: a non-empty section turns it on
  } else {
    p.use_parallelism_config = {false, fromDefault()};
  }
  paradigmNotes(p, o, config, f, notes);
  return p;
}

}  // namespace accel::launch::settings
