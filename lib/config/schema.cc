// SPDX-License-Identifier: Apache-2.0
// Prompts and defaults follow Accelerate's `accelerate config` ("This machine" flow) exactly,
// so a user who answers the same questions gets the same file from either tool.
#include "lib/config/schema.h"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/strings.h"

namespace accel {

namespace {

using T = ValueType;

const std::vector<std::string_view> kOffloadDevices = {"none", "cpu", "nvme"};
const std::vector<std::string_view> kShardingStrategies = {
    "FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"};

std::vector<KeySpec> buildSchema() {
  return {
      // ---- top level, in the order of Accelerate's ClusterConfig fields ----
      {.path = "compute_environment", .type = T::Enum, .file_default = R"("LOCAL_MACHINE")",
       .choices = {"LOCAL_MACHINE", "AMAZON_SAGEMAKER"},
       .help = "where the job runs; accel supports LOCAL_MACHINE"},
      {.path = "distributed_type", .type = T::Enum,
       .choices = {"NO", "MULTI_CPU", "MULTI_GPU", "MULTI_XPU", "MULTI_HPU", "MULTI_NPU",
                   "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_NEURON", "DEEPSPEED", "FSDP",
                   "XLA", "MEGATRON_LM"},
       .help = "how processes share the work (required)",
       .prompt = "Which type of machine are you using?"},
      {.path = "mixed_precision", .type = T::Enum, .choices = {"no", "fp16", "bf16", "fp8"},
       .help = "training precision; unset means no",
       .prompt = "Do you wish to use mixed precision?", .wizard_default = R"("no")"},
      {.path = "use_cpu", .type = T::Bool, .file_default = "false",
       .help = "run on CPU even when GPUs are present",
       .prompt = "Do you want to run your training on CPU only (even if a GPU / Apple Silicon / "
                 "Ascend NPU device is available)? [yes/NO]:"},
      {.path = "debug", .type = T::Bool, .file_default = "false",
       .help = "check distributed operations for errors while running (slower)",
       .prompt = "Should distributed operations be checked while running for errors? This can "
                 "avoid timeout issues but will be slower. [yes/NO]: "},
      {.path = "num_processes", .type = T::Int,
       .help = "total processes across all machines; unset means one per GPU at launch",
       .prompt = "How many {} should be used for distributed training? [1]:",
       .wizard_default = "1", .min = 1},
      {.path = "machine_rank", .type = T::Int, .file_default = "0",
       .help = "rank of this machine, 0 .. num_machines-1",
       .prompt = "What is the rank of this machine?", .min = 0},
      {.path = "num_machines", .type = T::Int, .file_default = "1", .help = "number of machines",
       .prompt = "How many different machines will you use (use more than 1 for multi-node "
                 "training)? [1]: ",
       .min = 1},
      {.path = "gpu_ids", .type = T::String,
       .help = "GPUs this machine uses: all, or ids such as 0,1",
       .prompt = "What {} (by id) should be used for training on this machine as a "
                 "comma-separated list? [all]:",
       .wizard_default = R"("all")"},
      {.path = "main_process_ip", .type = T::String,
       .help = "address of the machine that hosts rank 0 (multi-machine)",
       .prompt = "What is the IP address of the machine that will host the main process? "},
      {.path = "main_process_port", .type = T::Int,
       .help = "port of the rank-0 store; unset means 29500, 0 picks a free port",
       .prompt = "What is the port you will use to communicate with the main process? ",
       .min = 0, .max = 65535},
      {.path = "rdzv_backend", .type = T::String, .file_default = R"("static")",
       .help = "rendezvous backend (static, c10d, …)",
       .prompt = "What rendezvous backend will you use? ('static', 'c10d', ...): "},
      {.path = "same_network", .type = T::Bool, .file_default = "false", .help =
       "all machines on one local network (master_addr/port rather than a rendezvous endpoint)",
       .prompt = "Are all the machines on the same local network? Answer `no` if nodes are on "
                 "the cloud and/or on different network hosts [YES/no]: ",
       .wizard_default = "true"},
      {.path = "main_training_function", .type = T::String, .file_default = R"("main")",
       .help = "function launched on each TPU core (TPU only)",
       .prompt = "What is the name of the function in your script that should be launched in "
                 "all parallel scripts? [main]: "},
      {.path = "enable_cpu_affinity", .type = T::Bool, .file_default = "false",
       .help = "pin each local worker to its own contiguous share of the CPUs the launcher may use",
       .prompt = "Would you like to enable numa efficiency? (Currently only supported on NVIDIA "
                 "hardware). [yes/NO]: "},
      {.path = "fp8_config", .type = T::Map, .help = "FP8 training settings"},
      {.path = "deepspeed_config", .type = T::Map, .help = "DeepSpeed settings"},
      {.path = "fsdp_config", .type = T::Map, .help = "FullyShardedDataParallel settings",
       .add_prefix = "fsdp_"},
      {.path = "parallelism_config", .type = T::Map, .help = "N-D parallelism (FSDP2)",
       .open_prefix = "parallelism_config_"},
      {.path = "megatron_lm_config", .type = T::Map, .help = "Megatron-LM settings",
       .open_prefix = "megatron_lm_"},
      {.path = "mpirun_config", .type = T::Map, .help = "launch CPU workers through mpirun"},
      {.path = "downcast_bf16", .type = T::Scalar, .file_default = "false",
       .help = "TPU only: cast float to bfloat16"},
      {.path = "tpu_name", .type = T::String, .help = "TPU only"},
      {.path = "tpu_zone", .type = T::String, .help = "TPU only"},
      {.path = "tpu_use_cluster", .type = T::Bool, .file_default = "false", .help = "TPU only"},
      {.path = "tpu_use_sudo", .type = T::Scalar, .file_default = "false", .help = "TPU only"},
      {.path = "command_file", .type = T::String, .help = "TPU only"},
      {.path = "commands", .type = T::List, .help = "TPU only"},
      {.path = "tpu_vm", .type = T::List, .help = "TPU only"},
      {.path = "tpu_env", .type = T::List, .help = "TPU only"},
      {.path = "dynamo_config", .type = T::Map, .help = "torch.compile settings",
       .add_prefix = "dynamo_"},

      // ---- mpirun_config ----
      {.path = "mpirun_config.mpirun_hostfile", .type = T::String, .help = "mpirun hostfile",
       .prompt = "Please enter the path to the hostfile to use with mpirun [~/hostfile]: ",
       .wizard_default = R"("~/hostfile")"},

      // ---- dynamo_config ----
      {.path = "dynamo_config.dynamo_backend", .type = T::Enum,
       .choices = {"NO", "EAGER", "AOT_EAGER", "INDUCTOR", "AOT_TS_NVFUSER", "NVPRIMS_NVFUSER",
                   "CUDAGRAPHS", "OFI", "FX2TRT", "ONNXRT", "TENSORRT",
                   "AOT_TORCHXLA_TRACE_ONCE", "TORCHXLA_TRACE_ONCE", "IPEX", "TVM",
                   "HPU_BACKEND"},
       .help = "torch.compile backend", .prompt = "Which dynamo backend would you like to use?",
       .wizard_default = R"("INDUCTOR")", .fold_case = true},
      {.path = "dynamo_config.dynamo_mode", .type = T::Enum,
       .choices = {"default", "reduce-overhead", "max-autotune"}, .help = "torch.compile mode",
       .prompt = "Which mode do you want to use?", .wizard_default = R"("default")"},
      {.path = "dynamo_config.dynamo_use_fullgraph", .type = T::Bool,
       .help = "compile the whole model as one graph",
       .prompt = "Do you want the fullgraph mode or it is ok to break model into several "
                 "subgraphs? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "dynamo_config.dynamo_use_dynamic", .type = T::Bool,
       .help = "dynamic shape tracing",
       .prompt = "Do you want to enable dynamic shape tracing? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "dynamo_config.dynamo_use_regional_compilation", .type = T::Bool,
       .help = "compile repeated blocks once",
       .prompt = "Do you want to enable regional compilation? [yes/NO]: ",
       .wizard_default = "false"},

      // ---- deepspeed_config ----
      {.path = "deepspeed_config.deepspeed_config_file", .type = T::String,
       .help = "DeepSpeed JSON config; replaces the other DeepSpeed keys",
       .prompt = "Please enter the path to the json DeepSpeed config file: ",
       .wizard_default = R"("none")"},
      {.path = "deepspeed_config.zero_stage", .type = T::Int, .help = "ZeRO stage 0-3",
       .prompt = "What should be your DeepSpeed's ZeRO optimization stage?",
       .wizard_default = "2", .min = 0, .max = 3},
      {.path = "deepspeed_config.offload_optimizer_device", .type = T::Enum,
       .choices = kOffloadDevices, .help = "where optimizer states live",
       .prompt = "Where to offload optimizer states?", .wizard_default = R"("none")"},
      {.path = "deepspeed_config.offload_param_device", .type = T::Enum,
       .choices = kOffloadDevices, .help = "where parameters live",
       .prompt = "Where to offload parameters?", .wizard_default = R"("none")"},
      {.path = "deepspeed_config.offload_optimizer_nvme_path", .type = T::String,
       .help = "NVMe path for optimizer offload",
       .prompt = "Nvme Path to offload optimizer states?", .wizard_default = R"("/nvme")"},
      {.path = "deepspeed_config.offload_param_nvme_path", .type = T::String,
       .help = "NVMe path for parameter offload", .prompt = "Nvme Path to offload parameters?",
       .wizard_default = R"("/nvme")"},
      {.path = "deepspeed_config.gradient_accumulation_steps", .type = T::Int,
       .help = "micro-batches per optimizer step",
       .prompt = "How many gradient accumulation steps you're passing in your script? [1]: ",
       .wizard_default = "1", .min = 1},
      {.path = "deepspeed_config.gradient_clipping", .type = T::Float,
       .help = "gradient norm clipping value",
       .prompt = "What is the gradient clipping value? [1.0]: ", .wizard_default = "1.0"},
      {.path = "deepspeed_config.zero3_init_flag", .type = T::Bool,
       .help = "construct huge models with deepspeed.zero.Init",
       .prompt = "Do you want to enable `deepspeed.zero.Init` when using ZeRO Stage-3 for "
                 "constructing massive models? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "deepspeed_config.zero3_save_16bit_model", .type = T::Bool,
       .help = "save 16-bit weights under ZeRO-3",
       .prompt = "Do you want to save 16-bit model weights when using ZeRO Stage-3? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "deepspeed_config.deepspeed_moe_layer_cls_names", .type = T::String,
       .help = "comma-separated MoE layer classes",
       .prompt = "Specify the comma-separated list of transformers MoE layer class names "
                 "(case-sensitive), e.g :  `MixtralSparseMoeBlock`, `Qwen2MoeSparseMoeBlock`, "
                 "`JetMoEAttention,JetMoEBlock` ... : "},
      {.path = "deepspeed_config.deepspeed_multinode_launcher", .type = T::Enum,
       .choices = {"pdsh", "standard", "openmpi", "mvapich", "mpich", "nossh", "slurm"},
       .help = "how DeepSpeed starts processes on other machines",
       .prompt = "Which Type of launcher do you want to use?", .wizard_default = R"("pdsh")"},
      {.path = "deepspeed_config.deepspeed_hostfile", .type = T::String,
       .help = "DeepSpeed hostfile (`hostname slots=N` lines)",
       .prompt = "DeepSpeed configures multi-node compute resources with hostfile. Each row is "
                 "of the format `hostname slots=[num_gpus]`, e.g., `localhost slots=2`; for "
                 "more information please refer official "
                 "[documentation](https://www.deepspeed.ai/getting-started/"
                 "#resource-configuration-multi-node). Please specify the location of "
                 "hostfile: "},
      {.path = "deepspeed_config.deepspeed_exclusion_filter", .type = T::String,
       .help = "hosts/GPUs to exclude", .prompt = "DeepSpeed exclusion filter string: "},
      {.path = "deepspeed_config.deepspeed_inclusion_filter", .type = T::String,
       .help = "hosts/GPUs to include", .prompt = "DeepSpeed inclusion filter string: "},

      // ---- fsdp_config ----
      {.path = "fsdp_config.fsdp_version", .type = T::Int, .help = "FSDP version, 1 or 2",
       .prompt = "What should be your FSDP version? [2]: ", .wizard_default = "2", .min = 1,
       .max = 2},
      {.path = "fsdp_config.fsdp_reshard_after_forward", .type = T::Scalar,
       .choices = kShardingStrategies,
       .help = "v2: true/false; v1: a sharding strategy",
       .prompt = "Do you want to enable resharding after forward? [YES/no]: ",
       .wizard_default = "true"},
      {.path = "fsdp_config.fsdp_sharding_strategy", .type = T::Scalar,
       .choices = kShardingStrategies, .help = "legacy v1 sharding strategy",
       .prompt = "What should be your sharding strategy?",
       .wizard_default = R"("FULL_SHARD")"},
      {.path = "fsdp_config.fsdp_offload_params", .type = T::Bool,
       .help = "offload parameters and gradients to CPU",
       .prompt = "Do you want to offload parameters and gradients to CPU? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "fsdp_config.fsdp_auto_wrap_policy", .type = T::Enum,
       .choices = {"TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP"},
       .help = "how modules are wrapped", .prompt = "What should be your auto wrap policy?",
       .wizard_default = R"("TRANSFORMER_BASED_WRAP")"},
      {.path = "fsdp_config.fsdp_transformer_layer_cls_to_wrap", .type = T::String,
       .help = "comma-separated layer classes to wrap",
       .prompt = "Specify the comma-separated list of transformer layer class names "
                 "(case-sensitive) to wrap ,e.g, :`BertLayer`, `GPTJBlock`, `T5Block`, "
                 "`BertLayer,BertEmbeddings,BertSelfOutput` ...? : "},
      {.path = "fsdp_config.fsdp_min_num_params", .type = T::Int,
       .help = "minimum parameters per wrapped unit (SIZE_BASED_WRAP)",
       .prompt = "What should be your FSDP's minimum number of parameters for Default Auto "
                 "Wrapping Policy? [1e8]: ",
       .wizard_default = "100000000", .min = 0},
      {.path = "fsdp_config.fsdp_backward_prefetch", .type = T::Enum,
       .choices = {"BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH"},
       .help = "v1 backward prefetch policy",
       .prompt = "What should be your FSDP's backward prefetch policy?",
       .wizard_default = R"("BACKWARD_PRE")"},
      {.path = "fsdp_config.fsdp_state_dict_type", .type = T::Enum,
       .choices = {"FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT"},
       .help = "checkpoint layout", .prompt = "What should be your FSDP's state dict type?"},
      {.path = "fsdp_config.fsdp_forward_prefetch", .type = T::Bool,
       .help = "v1 forward prefetch",
       .prompt = "Do you want to enable FSDP's forward prefetch policy? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "fsdp_config.fsdp_use_orig_params", .type = T::Bool,
       .help = "v1 use_orig_params",
       .prompt = "Do you want to enable FSDP's `use_orig_params` feature? [YES/no]: ",
       .wizard_default = "true"},
      {.path = "fsdp_config.fsdp_cpu_ram_efficient_loading", .type = T::Bool,
       .help = "load weights on rank 0 only",
       .prompt = "Do you want to enable CPU RAM efficient model loading? Only applicable for "
                 "\xF0\x9F\xA4\x97 Transformers models. [YES/no]: ",
       .wizard_default = "true"},
      {.path = "fsdp_config.fsdp_sync_module_states", .type = T::Bool,
       .help = "broadcast rank 0's parameters at start",
       .prompt = "Do you want each individually wrapped FSDP unit to broadcast module "
                 "parameters from rank 0 at the start? [YES/no]: ",
       .wizard_default = "true"},
      {.path = "fsdp_config.fsdp_activation_checkpointing", .type = T::Bool,
       .help = "recompute activations in backward",
       .prompt = "Do you want to enable FSDP activation checkpointing? [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "fsdp_config.fsdp_ignored_modules", .type = T::String,
       .help = "modules FSDP leaves alone"},

      // ---- megatron_lm_config (other megatron_lm_* keys are accepted as written) ----
      {.path = "megatron_lm_config.megatron_lm_tp_degree", .type = T::Int,
       .help = "tensor parallel size",
       .prompt = "What is the Tensor Parallelism degree/size? [1]:", .wizard_default = "1",
       .min = 1},
      {.path = "megatron_lm_config.megatron_lm_sequence_parallelism", .type = T::Bool,
       .help = "sequence parallelism",
       .prompt = "Do you want to enable Sequence Parallelism? [YES/no]: ",
       .wizard_default = "true"},
      {.path = "megatron_lm_config.megatron_lm_pp_degree", .type = T::Int,
       .help = "pipeline parallel size",
       .prompt = "What is the Pipeline Parallelism degree/size? [1]:", .wizard_default = "1",
       .min = 1},
      {.path = "megatron_lm_config.megatron_lm_num_micro_batches", .type = T::Int,
       .help = "pipeline micro-batches",
       .prompt = "What is the number of micro-batches? [1]:", .wizard_default = "1", .min = 1},
      {.path = "megatron_lm_config.megatron_lm_recompute_activations", .type = T::Bool,
       .help = "selective activation recomputation",
       .prompt = "Do you want to enable selective activation recomputation? [YES/no]: ",
       .wizard_default = "true"},
      {.path = "megatron_lm_config.megatron_lm_use_distributed_optimizer", .type = T::Bool,
       .help = "shard optimizer state",
       .prompt = "Do you want to use distributed optimizer which shards optimizer state and "
                 "gradients across data parallel ranks? [YES/no]: ",
       .wizard_default = "true"},
      {.path = "megatron_lm_config.megatron_lm_gradient_clipping", .type = T::Float,
       .help = "global L2 norm clipping (0 disables)",
       .prompt = "What is the gradient clipping value based on global L2 Norm (0 to disable)? "
                 "[1.0]: ",
       .wizard_default = "1.0"},

      // ---- parallelism_config (other parallelism_config_* keys are accepted as written) ----
      {.path = "parallelism_config.parallelism_config_dp_replicate_size", .type = T::Int,
       .help = "data-parallel replicas",
       .prompt = "What is the data parallelism replicate size? [1]: ", .wizard_default = "1",
       .min = 1},
      {.path = "parallelism_config.parallelism_config_dp_shard_size", .type = T::Int,
       .help = "FSDP shard group size", .prompt = "What is the FSDP shard size? [1]: ",
       .wizard_default = "1", .min = 1},
      {.path = "parallelism_config.parallelism_config_tp_size", .type = T::Int,
       .help = "tensor parallel size", .prompt = "What is the tensor parallelism size? [1]: ",
       .wizard_default = "1", .min = 1},
      {.path = "parallelism_config.parallelism_config_cp_size", .type = T::Int,
       .help = "context parallel size", .prompt = "What is the context parallelism size? [1]: ",
       .wizard_default = "1", .min = 1},
      {.path = "parallelism_config.parallelism_config_cp_comm_strategy", .type = T::Enum,
       .choices = {"allgather", "alltoall"}, .help = "context parallel communication",
       .prompt = "What is the compute parallelism communication strategy?",
       .wizard_default = R"("allgather")"},

      // ---- fp8_config ----
      {.path = "fp8_config.backend", .type = T::Enum, .choices = {"AO", "TE", "MSAMP"},
       .help = "FP8 library", .prompt = "Which FP8 backend do you want to use?",
       .wizard_default = R"("AO")", .fold_case = true},
      {.path = "fp8_config.use_autocast_during_eval", .type = T::Bool,
       .help = "FP8 autocast in eval mode",
       .prompt = "Do you want to use FP8 autocast during eval mode? Generally better metrics "
                 "are found when this is disabled [yes/NO]: ",
       .wizard_default = "false"},
      {.path = "fp8_config.margin", .type = T::Int, .help = "TE scaling margin",
       .prompt = "What margin should be used for gradient scaling? [0]: ",
       .wizard_default = "0"},
      {.path = "fp8_config.interval", .type = T::Int, .help = "TE scaling update interval",
       .prompt = "What interval should be used for how often the scaling factor is "
                 "recomputed? [1]: ",
       .wizard_default = "1", .min = 1},
      {.path = "fp8_config.fp8_format", .type = T::Enum, .choices = {"HYBRID", "E4M3", "E5M2"},
       .help = "TE FP8 format", .prompt = "Which weight format should be used?",
       .wizard_default = R"("HYBRID")"},
      {.path = "fp8_config.amax_history_len", .type = T::Int, .help = "TE amax history length",
       .prompt = "What length of history should be used for the amax scaling factor "
                 "computation? [1024]: ",
       .wizard_default = "1024", .min = 1},
      {.path = "fp8_config.amax_compute_algo", .type = T::Enum,
       .choices = {"max", "most_recent"}, .help = "TE amax algorithm",
       .prompt = "Which algorithm should be used for the amax scaling factor computation?",
       .wizard_default = R"("max")"},
      {.path = "fp8_config.override_linear_precision", .type = T::List,
       .help = "TE: run fprop, dgrad, wgrad in higher precision (3 booleans)",
       .prompt = "Do you want to execute `fprop`, `dgrad`, and `wgrad` GEMMS in higher "
                 "precision? [yes/NO]: "},
      {.path = "fp8_config.opt_level", .type = T::Enum, .choices = {"O1", "O2"},
       .help = "MS-AMP optimisation level",
       .prompt = "Which optimization level should be used?", .wizard_default = R"("O2")"},
      {.path = "fp8_config.enable_fsdp_float8_all_gather", .type = T::Bool,
       .help = "AO: float8 all-gather under FSDP2",
       .prompt = "Do you want to enable FSDP2 float8 all gather? This is recommended for "
                 "better performance if using FSDP2. [YES/no]: ",
       .wizard_default = "true"},
      {.path = "fp8_config.pad_inner_dim", .type = T::Bool,
       .help = "AO: pad weight inner dimension",
       .prompt = "Do you want to pad the inner dimension of weight matrices before float8 "
                 "matmuls? This is required for _scaled_mm which has strict alignment "
                 "requirements. Note: padding may cause memory spikes. [YES/no]: ",
       .wizard_default = "true"},
  };
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

std::vector<std::string> childKeys(std::string_view map_path) {
  std::vector<std::string> keys;
  for (const auto& spec : configSchema()) {
    std::string_view path = spec.path;
    size_t dot = path.rfind('.');
    std::string_view parent = dot == path.npos ? std::string_view() : path.substr(0, dot);
    if (parent == map_path) keys.emplace_back(path.substr(dot == path.npos ? 0 : dot + 1));
  }
  return keys;
}

nlohmann::json fileDefault(const KeySpec& spec) { return parseLiteral(spec.file_default); }

nlohmann::json wizardDefault(const KeySpec& spec) {
  return spec.wizard_default.empty() ? fileDefault(spec) : parseLiteral(spec.wizard_default);
}

std::string describeType(const KeySpec& spec) {
  std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
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
    case ValueType::Scalar:
      return choices.empty() ? "a scalar" : "true, false or one of: " + join(choices, ", ");
  }
  return "a value";
}

}  // namespace accel
