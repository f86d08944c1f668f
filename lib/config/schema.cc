// SPDX-License-Identifier: Apache-2.0
// Prompts and defaults follow Accelerate's `accelerate config` ("This machine" flow) exactly,
// so a user who answers the same questions gets the same file from either tool.
#include "lib/config/schema.h"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/defaults.h"
#include "lib/common/strings.h"
#include "lib/config/schema_rows.h"

namespace accel {

namespace {

using T = ValueType;

const std::string kPortText = std::to_string(defaults::kMainProcessPort);

std::vector<KeySpec> buildSchema() {
  // A table: one key per entry, its fields grouped by role (kept by hand).
  // clang-format off
  std::vector<KeySpec> rows = {
      // ---- top level, in the order of Accelerate's ClusterConfig fields ----
      {.path = "compute_environment", .type = T::Enum, .file_default = R"("LOCAL_MACHINE")",
       .choices = {"LOCAL_MACHINE", "AMAZON_SAGEMAKER"},
       .help = "where the job runs; accel launches LOCAL_MACHINE (a SageMaker file is read and shown)",
       .section = Section::Both, .checked_on_load = true},
      {.path = "distributed_type", .type = T::Enum,
       .choices = {"NO", "MULTI_CPU", "MULTI_GPU", "MULTI_XPU", "MULTI_HPU", "MULTI_NPU",
                   "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_NEURON", "DEEPSPEED", "FSDP",
                   "XLA", "MEGATRON_LM"},
       .help = "how processes share the work (required)",
       .prompt = "Which type of machine are you using?",
       .section = Section::Both, .checked_on_load = true,
       .sagemaker_choices = {"NO", "DATA_PARALLEL", "MODEL_PARALLEL"}},
      {.path = "mixed_precision", .type = T::Enum, .choices = {"no", "fp16", "bf16", "fp8"},
       .help = "training precision; unset means no",
       .prompt = "Do you wish to use mixed precision?", .wizard_default = R"("no")",
       .flag = "mixed_precision", .launch_default = R"("no")", .exports = "ACCELERATE_MIXED_PRECISION",
       .section = Section::Both},
      {.path = "use_cpu", .type = T::Bool, .file_default = "false",
       .help = "run on CPU even when GPUs are present",
       .prompt = "Do you want to run your training on CPU only (even if a GPU / Apple Silicon / "
                 "Ascend NPU device is available)? [yes/NO]:",
       .section = Section::Both},
      {.path = "debug", .type = T::Bool, .file_default = "false",
       .help = "Accelerate's debug mode (ACCELERATE_DEBUG_MODE): its operations check that ranks agree (slower)",
       .prompt = "Should distributed operations be checked while running for errors? This can "
                 "avoid timeout issues but will be slower. [yes/NO]: ",
       .flag = "debug", .is_switch = true, .launch_default = "false", .exports = "ACCELERATE_DEBUG_MODE=true",
       .section = Section::Both},
      {.path = "num_processes", .type = T::Int,
       .help = "total processes across all machines; unset means one per GPU at launch",
       .prompt = "How many {} should be used for distributed training? [{}]:",
       .wizard_default = "1", .min = 1,
       .flag = "num_processes"},
      {.path = "machine_rank", .type = T::Int, .file_default = "0",
       .help = "rank of this machine, 0 .. num_machines-1",
       .prompt = "What is the rank of this machine?", .min = 0,
       .flag = "machine_rank", .placement = true, .launch_default = "0"},
      {.path = "num_machines", .type = T::Int, .file_default = "1", .help = "number of machines",
       .prompt = "How many different machines will you use (use more than 1 for multi-node "
                 "training)? [1]: ",
       .min = 1,
       .flag = "num_machines", .placement = true, .launch_default = "1",
       .section = Section::Both},
      {.path = "gpu_ids", .type = T::String,
       .help = "GPUs this machine uses: all, or ids such as 0,1",
       .prompt = "What {} (by id) should be used for training on this machine as a "
                 "comma-separated list? [all]:",
       .wizard_default = R"("all")",
       .flag = "gpu_ids", .launch_default = R"("all")",
       .section = Section::Both, .sagemaker_default = R"("all")"},
      {.path = "main_process_ip", .type = T::String,
       .help = "address of the machine that hosts rank 0 (multi-machine)",
       .prompt = "What is the IP address of the machine that will host the main process? ",
       .flag = "main_process_ip", .placement = true, .launch_default = R"("127.0.0.1")"},
      {.path = "main_process_port", .type = T::Int,
       .help = "port of the rank-0 store; unset means 29500, 0 picks a free port",
       .prompt = "What is the port you will use to communicate with the main process? ",
       .min = 0, .max = 65535,
       .flag = "main_process_port", .launch_default = kPortText},
      {.path = "rdzv_backend", .type = T::String, .file_default = R"("static")",
       .help = "rendezvous backend: static, c10d (machine 0 at the endpoint gives out ranks), etcd or etcd-v2 "
               "(machine 0 elected in etcd at the endpoint)",
       .prompt = "What rendezvous backend will you use? ('static', 'c10d', ...): ",
       .flag = "rdzv_backend", .launch_default = R"("static")"},
      {.path = "same_network", .type = T::Bool, .file_default = "false", .help =
       "all machines on one local network; accel always meets at main_process_ip:main_process_port",
       .prompt = "Are all the machines on the same local network? Answer `no` if nodes are on "
                 "the cloud and/or on different network hosts [YES/no]: ",
       .wizard_default = "true",
       .flag = "same_network", .is_switch = true, .launch_default = "false"},
      {.path = "main_training_function", .type = T::String, .file_default = R"("main")",
       .help = "function launched on each TPU core (TPU only)",
       .prompt = "What is the name of the function in your script that should be launched in "
                 "all parallel scripts? [main]: ",
       // Accepted as Accelerate accepts it on any launch (its wizard writes it into every file),
       // and used by none but TPU launches: nothing to export.
       .flag = "main_training_function"},
      {.path = "enable_cpu_affinity", .type = T::Bool, .file_default = "false",
       .help = "pin each local worker to its own contiguous share of the CPUs the launcher may use",
       .prompt = "Would you like to enable numa efficiency? (Currently only supported on NVIDIA "
                 "hardware). [yes/NO]: ",
       .flag = "enable_cpu_affinity", .is_switch = true, .launch_default = "false", .exports = "ACCELERATE_CPU_AFFINITY=1",
       .section = Section::Both},
      {.path = "fp8_config", .type = T::Map, .help = "FP8 training settings"},
      {.path = "deepspeed_config", .type = T::Map, .help = "DeepSpeed settings"},
      {.path = "fsdp_config", .type = T::Map, .help = "FullyShardedDataParallel settings",
       .add_prefix = "fsdp_"},
      {.path = "parallelism_config", .type = T::Map, .help = "N-D parallelism (FSDP2)",
       .open_prefix = "parallelism_config_", .export_when = ExportWhen::Parallelism},
      {.path = "megatron_lm_config", .type = T::Map, .help = "Megatron-LM settings",
       .open_prefix = "megatron_lm_", .export_when = ExportWhen::MegatronLm},
      {.path = "mpirun_config", .type = T::Map, .help = "launch CPU workers through mpirun"},
      {.path = "downcast_bf16", .type = T::Scalar, .file_default = "false",
       .help = "TPU only: cast float to bfloat16",
       .flag = "downcast_bf16", .is_switch = true},
      {.path = "tpu_name", .type = T::String, .help = "TPU only"},
      {.path = "tpu_zone", .type = T::String, .help = "TPU only"},
      {.path = "tpu_use_cluster", .type = T::Bool, .file_default = "false", .help = "TPU only"},
      {.path = "tpu_use_sudo", .type = T::Scalar, .file_default = "false", .help = "TPU only"},
      {.path = "command_file", .type = T::String, .help = "TPU only"},
      {.path = "commands", .type = T::List, .help = "TPU only"},
      {.path = "tpu_vm", .type = T::List, .help = "TPU only"},
      {.path = "tpu_env", .type = T::List, .help = "TPU only"},
      {.path = "dynamo_config", .type = T::Map, .help = "torch.compile settings",
       .add_prefix = "dynamo_", .section = Section::Both},

      // ---- mpirun_config ----
      {.path = "mpirun_config.mpirun_hostfile", .type = T::String,
       .help = "run the CPU ranks through mpirun with this hostfile (Open MPI, Intel MPI, MVAPICH)",
       .prompt = "Please enter the path to the hostfile to use with mpirun [~/hostfile]: ",
       .wizard_default = R"("~/hostfile")",
       .flag = "mpirun_hostfile"},

      // ---- dynamo_config ----
      {.path = "dynamo_config.dynamo_backend", .type = T::Enum,
       .choices = {"NO", "EAGER", "AOT_EAGER", "INDUCTOR", "AOT_TS_NVFUSER", "NVPRIMS_NVFUSER",
                   "CUDAGRAPHS", "OFI", "FX2TRT", "ONNXRT", "TENSORRT",
                   "AOT_TORCHXLA_TRACE_ONCE", "TORCHXLA_TRACE_ONCE", "IPEX", "TVM",
                   "HPU_BACKEND"},
       .help = "torch.compile backend", .prompt = "Which dynamo backend would you like to use?",
       .wizard_default = R"("INDUCTOR")", .fold_case = true,
       .flag = "dynamo_backend", .launch_default = R"("NO")", .exports = "ACCELERATE_DYNAMO_BACKEND",
       .export_when = ExportWhen::NotDeepSpeed},
      {.path = "dynamo_config.dynamo_mode", .type = T::Enum,
       .choices = {"default", "reduce-overhead", "max-autotune"}, .help = "torch.compile mode",
       .prompt = "Which mode do you want to use?", .wizard_default = R"("default")",
       .flag = "dynamo_mode", .launch_default = R"("default")", .exports = "ACCELERATE_DYNAMO_MODE",
       .export_when = ExportWhen::NotDeepSpeed},
      {.path = "dynamo_config.dynamo_use_fullgraph", .type = T::Bool,
       .help = "compile the whole model as one graph",
       .prompt = "Do you want the fullgraph mode or it is ok to break model into several "
                 "subgraphs? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "dynamo_use_fullgraph", .is_switch = true, .launch_default = "false", .exports = "ACCELERATE_DYNAMO_USE_FULLGRAPH",
       .export_when = ExportWhen::NotDeepSpeed},
      {.path = "dynamo_config.dynamo_use_dynamic", .type = T::Bool,
       .help = "dynamic shape tracing",
       .prompt = "Do you want to enable dynamic shape tracing? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "dynamo_use_dynamic", .is_switch = true, .launch_default = "false", .exports = "ACCELERATE_DYNAMO_USE_DYNAMIC",
       .export_when = ExportWhen::NotDeepSpeed},
      {.path = "dynamo_config.dynamo_use_regional_compilation", .type = T::Bool,
       .help = "compile repeated blocks once",
       .prompt = "Do you want to enable regional compilation? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "dynamo_use_regional_compilation", .is_switch = true, .launch_default = "false", .exports = "ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION",
       .export_when = ExportWhen::NotDeepSpeed},
  };
  // clang-format on
  for (auto* section :
       {&schema_rows::deepSpeedAndFsdp, &schema_rows::megatronParallelismFp8, &schema_rows::sageMaker}) {
    for (auto& row : (*section)()) rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json parseLiteral(std::string_view text) {
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
}

}  // namespace

const std::vector<KeySpec>& configSchema() {
  static const std::vector<KeySpec> schema = buildSchema();
  return schema;
}

const KeySpec* findKey(std::string_view path) {
  for (const auto& spec : configSchema()) {
    if (spec.path == path) return &spec;
  }
  return nullptr;
}

const KeySpec& keySpec(std::string_view path) {
  const KeySpec* spec = findKey(path);
  if (!spec) throw std::logic_error("no schema row for " + std::string(path));
  return *spec;
}

std::vector<std::string> childKeys(std::string_view map_path, bool sagemaker) {
  std::vector<std::string> keys;
  for (const auto& spec : configSchema()) {
    std::string_view path = spec.path;
    size_t dot = path.rfind('.');
    std::string_view parent = dot == path.npos ? std::string_view() : path.substr(0, dot);
    if (parent == map_path && (dot != path.npos || inSection(spec, sagemaker))) {
      keys.emplace_back(path.substr(dot == path.npos ? 0 : dot + 1));
    }
  }
  return keys;
}

bool inSection(const KeySpec& spec, bool sagemaker) {
  return spec.section == Section::Both || (spec.section == Section::SageMaker) == sagemaker;
}

nlohmann::json fileDefault(const KeySpec& spec, bool sagemaker) {
  return parseLiteral(sagemaker && !spec.sagemaker_default.empty() ? spec.sagemaker_default : spec.file_default);
}

const std::vector<std::string_view>& choicesOf(const KeySpec& spec, bool sagemaker) {
  return sagemaker && !spec.sagemaker_choices.empty() ? spec.sagemaker_choices : spec.choices;
}

nlohmann::json launchDefault(const KeySpec& spec) { return parseLiteral(spec.launch_default); }

nlohmann::json wizardDefault(const KeySpec& spec) {
  return spec.wizard_default.empty() ? fileDefault(spec) : parseLiteral(spec.wizard_default);
}

std::string describeType(const KeySpec& spec, bool sagemaker) {
  const auto& listed = choicesOf(spec, sagemaker);
  std::vector<std::string> choices(listed.begin(), listed.end());
  switch (spec.type) {
    case ValueType::Bool: return "true or false";
    case ValueType::Int:
      if (spec.min != LLONG_MIN && spec.max != LLONG_MAX) {
        return fmt::format("an integer from {} to {}", spec.min, spec.max);
      }
      if (spec.min != LLONG_MIN) return fmt::format("an integer >= {}", spec.min);
      return "an integer";
    case ValueType::Float: return "a number";
    case ValueType::String: return "a string";
    case ValueType::Enum: return "one of: " + join(choices, ", ");
    case ValueType::List: return "a list";
    case ValueType::Map: return "a map of keys";
    case ValueType::Scalar: return choices.empty() ? "a scalar" : "true, false or one of: " + join(choices, ", ");
    case ValueType::Any: return "any value";
  }
  return "a value";
}

}  // namespace accel
