// SPDX-License-Identifier: Apache-2.0
// The rows of deepspeed_config and fsdp_config.
// Prompts and defaults are Accelerate's; `flag`, `launch_default` and `exports` are what
// `accelerate launch` takes and exports (accelerate/commands/launch.py, utils/launch.py of 1.15).
#include "lib/config/schema_rows.h"

namespace accel::schema_rows {

namespace {
using T = ValueType;
using W = ExportWhen;
using C = ExportCase;
const std::vector<std::string_view> kOffloadDevices = {"none", "cpu", "nvme"};
const std::vector<std::string_view> kShardingStrategies = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                                           "HYBRID_SHARD_ZERO2"};

}  // namespace

std::vector<KeySpec> deepSpeedAndFsdp() {
  // A table: one key per entry, its fields grouped by role (kept by hand).
  // clang-format off
  return {
      // ---- deepspeed_config ----
      {.path = "deepspeed_config.deepspeed_config_file", .type = T::String,
       .help = "DeepSpeed JSON config; replaces the other DeepSpeed keys",
       .prompt = "Please enter the path to the json DeepSpeed config file: ",
       .wizard_default = R"("none")",
       .flag = "deepspeed_config_file", .exports = "ACCELERATE_DEEPSPEED_CONFIG_FILE", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.zero_stage", .type = T::Int, .help = "ZeRO stage 0-3",
       .prompt = "What should be your DeepSpeed's ZeRO optimization stage?",
       .wizard_default = "2", .min = 0, .max = 3,
       .flag = "zero_stage", .exports = "ACCELERATE_DEEPSPEED_ZERO_STAGE", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.offload_optimizer_device", .type = T::Enum,
       .choices = kOffloadDevices, .help = "where optimizer states live",
       .prompt = "Where to offload optimizer states?", .wizard_default = R"("none")",
       .flag = "offload_optimizer_device", .exports = "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.offload_param_device", .type = T::Enum,
       .choices = kOffloadDevices, .help = "where parameters live",
       .prompt = "Where to offload parameters?", .wizard_default = R"("none")",
       .flag = "offload_param_device", .exports = "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.offload_optimizer_nvme_path", .type = T::String,
       .help = "NVMe path for optimizer offload",
       .prompt = "Nvme Path to offload optimizer states?", .wizard_default = R"("/nvme")",
       // Not exported: Accelerate 1.15's DeepSpeed launcher passes neither NVMe path on (its
       // plugin then keeps its default), and its workers must see what they see there.
       .flag = "offload_optimizer_nvme_path"},
      {.path = "deepspeed_config.offload_param_nvme_path", .type = T::String,
       .help = "NVMe path for parameter offload", .prompt = "Nvme Path to offload parameters?",
       .wizard_default = R"("/nvme")",
       .flag = "offload_param_nvme_path"},  // not exported, as offload_optimizer_nvme_path
      {.path = "deepspeed_config.gradient_accumulation_steps", .type = T::Int,
       .help = "micro-batches per optimizer step",
       .prompt = "How many gradient accumulation steps you're passing in your script? [1]: ",
       .wizard_default = "1", .min = 1,
       // Under DeepSpeed only, as Accelerate: elsewhere its Accelerator() would take the variable.
       .flag = "gradient_accumulation_steps", .exports = "ACCELERATE_GRADIENT_ACCUMULATION_STEPS", .export_when = W::DeepSpeed},
      {.path = "deepspeed_config.gradient_clipping", .type = T::Float,
       .help = "gradient norm clipping value",
       .prompt = "What is the gradient clipping value? [1.0]: ", .wizard_default = "1.0",
       .flag = "gradient_clipping", .exports = "ACCELERATE_GRADIENT_CLIPPING", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.zero3_init_flag", .type = T::Bool,
       .help = "construct huge models with deepspeed.zero.Init",
       .prompt = "Do you want to enable `deepspeed.zero.Init` when using ZeRO Stage-3 for "
                 "constructing massive models? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "zero3_init_flag", .exports = "ACCELERATE_DEEPSPEED_ZERO3_INIT", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.zero3_save_16bit_model", .type = T::Bool,
       .help = "save 16-bit weights under ZeRO-3",
       .prompt = "Do you want to save 16-bit model weights when using ZeRO Stage-3? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "zero3_save_16bit_model", .exports = "ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL", .export_when = W::DeepSpeed, .export_case = C::Lower},
      {.path = "deepspeed_config.deepspeed_moe_layer_cls_names", .type = T::String,
       .help = "comma-separated MoE layer classes",
       .prompt = "Specify the comma-separated list of transformers MoE layer class names "
                 "(case-sensitive), e.g :  `MixtralSparseMoeBlock`, `Qwen2MoeSparseMoeBlock`, "
                 "`JetMoEAttention,JetMoEBlock` ... : ",
       .flag = "deepspeed_moe_layer_cls_names", .exports = "ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES", .export_when = W::DeepSpeed},
      {.path = "deepspeed_config.deepspeed_multinode_launcher", .type = T::Enum,
       .choices = {"pdsh", "standard", "openmpi", "mvapich", "mpich", "nossh", "slurm", "impi"},
       .menu_choices = {"pdsh", "standard", "openmpi", "mvapich", "mpich", "nossh", "slurm"},
       .help = "how DeepSpeed starts processes on other machines",
       .prompt = "Which Type of launcher do you want to use?", .wizard_default = R"("pdsh")",
       .flag = "deepspeed_multinode_launcher"},
      {.path = "deepspeed_config.deepspeed_hostfile", .type = T::String,
       .help = "DeepSpeed hostfile (`hostname slots=N` lines)",
       .prompt = "DeepSpeed configures multi-node compute resources with hostfile. Each row is "
                 "of the format `hostname slots=[num_gpus]`, e.g., `localhost slots=2`; for "
                 "more information please refer official "
                 "[documentation](https://www.deepspeed.ai/getting-started/"
                 "#resource-configuration-multi-node). Please specify the location of "
                 "hostfile: ",
       .flag = "deepspeed_hostfile"},
      {.path = "deepspeed_config.deepspeed_exclusion_filter", .type = T::String,
       .help = "hosts/GPUs to exclude", .prompt = "DeepSpeed exclusion filter string: ",
       .flag = "deepspeed_exclusion_filter"},
      {.path = "deepspeed_config.deepspeed_inclusion_filter", .type = T::String,
       .help = "hosts/GPUs to include", .prompt = "DeepSpeed inclusion filter string: ",
       .flag = "deepspeed_inclusion_filter"},

      // ---- fsdp_config ----
      {.path = "fsdp_config.fsdp_version", .type = T::Int, .help = "FSDP version, 1 or 2",
       .prompt = "What should be your FSDP version? [2]: ", .wizard_default = "2", .min = 1,
       .max = 2,
       .flag = "fsdp_version", .launch_default = "1", .exports = "FSDP_VERSION", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_reshard_after_forward", .type = T::Scalar,
       .choices = kShardingStrategies,
       .help = "v2: true/false; v1: a sharding strategy",
       .prompt = "Do you want to enable resharding after forward? [YES/no]: ",
       .wizard_default = "true",
       .flag = "fsdp_reshard_after_forward", .launch_default = "true", .exports = "FSDP_RESHARD_AFTER_FORWARD", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_sharding_strategy", .type = T::Scalar,
       .choices = kShardingStrategies, .help = "legacy v1 sharding strategy",
       .prompt = "What should be your sharding strategy?",
       .wizard_default = R"("FULL_SHARD")",
       .flag = "fsdp_sharding_strategy", .launch_default = R"("FULL_SHARD")", .exports = "FSDP_SHARDING_STRATEGY", .export_when = W::Fsdp, .export_case = C::Upper},
      {.path = "fsdp_config.fsdp_offload_params", .type = T::Bool,
       .help = "offload parameters and gradients to CPU",
       .prompt = "Do you want to offload parameters and gradients to CPU? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "fsdp_offload_params", .launch_default = "false", .exports = "FSDP_OFFLOAD_PARAMS", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_auto_wrap_policy", .type = T::Enum,
       .choices = {"TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP"},
       .help = "how modules are wrapped", .prompt = "What should be your auto wrap policy?",
       .wizard_default = R"("TRANSFORMER_BASED_WRAP")",
       .flag = "fsdp_auto_wrap_policy", .exports = "FSDP_AUTO_WRAP_POLICY", .export_when = W::Fsdp},
      {.path = "fsdp_config.fsdp_transformer_layer_cls_to_wrap", .type = T::String,
       .help = "comma-separated layer classes to wrap",
       .prompt = "Specify the comma-separated list of transformer layer class names "
                 "(case-sensitive) to wrap ,e.g, :`BertLayer`, `GPTJBlock`, `T5Block`, "
                 "`BertLayer,BertEmbeddings,BertSelfOutput` ...? : ",
       .flag = "fsdp_transformer_layer_cls_to_wrap", .exports = "FSDP_TRANSFORMER_CLS_TO_WRAP", .export_when = W::Fsdp},
      {.path = "fsdp_config.fsdp_min_num_params", .type = T::Int,
       .help = "minimum parameters per wrapped unit (SIZE_BASED_WRAP)",
       .prompt = "What should be your FSDP's minimum number of parameters for Default Auto "
                 "Wrapping Policy? [1e8]: ",
       .wizard_default = "100000000", .min = 0,
       .flag = "fsdp_min_num_params", .launch_default = "100000000", .exports = "FSDP_MIN_NUM_PARAMS", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_backward_prefetch", .type = T::Enum,
       .choices = {"BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH"},
       .help = "v1 backward prefetch policy",
       .prompt = "What should be your FSDP's backward prefetch policy?",
       .wizard_default = R"("BACKWARD_PRE")",
       .flag = "fsdp_backward_prefetch", .exports = "FSDP_BACKWARD_PREFETCH", .export_when = W::Fsdp},
      {.path = "fsdp_config.fsdp_state_dict_type", .type = T::Enum,
       .choices = {"FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT"},
       .help = "checkpoint layout", .prompt = "What should be your FSDP's state dict type?",
       .flag = "fsdp_state_dict_type", .exports = "FSDP_STATE_DICT_TYPE", .export_when = W::Fsdp},
      {.path = "fsdp_config.fsdp_forward_prefetch", .type = T::Bool,
       .help = "v1 forward prefetch",
       .prompt = "Do you want to enable FSDP's forward prefetch policy? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "fsdp_forward_prefetch", .launch_default = "false", .exports = "FSDP_FORWARD_PREFETCH", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_use_orig_params", .type = T::Bool,
       .help = "v1 use_orig_params",
       .prompt = "Do you want to enable FSDP's `use_orig_params` feature? [YES/no]: ",
       .wizard_default = "true",
       .flag = "fsdp_use_orig_params", .launch_default = "true", .exports = "FSDP_USE_ORIG_PARAMS", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_cpu_ram_efficient_loading", .type = T::Bool,
       .help = "load weights on rank 0 only",
       .prompt = "Do you want to enable CPU RAM efficient model loading? Only applicable for "
                 "\xF0\x9F\xA4\x97 Transformers models. [YES/no]: ",
       .wizard_default = "true",
       .flag = "fsdp_cpu_ram_efficient_loading", .launch_default = "true", .exports = "FSDP_CPU_RAM_EFFICIENT_LOADING", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_sync_module_states", .type = T::Bool,
       .help = "broadcast rank 0's parameters at start",
       .prompt = "Do you want each individually wrapped FSDP unit to broadcast module "
                 "parameters from rank 0 at the start? [YES/no]: ",
       .wizard_default = "true",
       .flag = "fsdp_sync_module_states", .launch_default = "true", .exports = "FSDP_SYNC_MODULE_STATES", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_activation_checkpointing", .type = T::Bool,
       .help = "recompute activations in backward",
       .prompt = "Do you want to enable FSDP activation checkpointing? [yes/NO]: ",
       .wizard_default = "false",
       .flag = "fsdp_activation_checkpointing", .launch_default = "false", .exports = "FSDP_ACTIVATION_CHECKPOINTING", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_activation_checkpointing_offload", .type = T::Bool,
       .help = "offload checkpointed activations to the CPU (FSDP2)",
       .flag = "fsdp_activation_checkpointing_offload", .launch_default = "false", .exports = "FSDP_ACTIVATION_CHECKPOINTING_OFFLOAD", .export_when = W::Fsdp, .export_case = C::Lower},
      {.path = "fsdp_config.fsdp_ignored_modules", .type = T::String,
       .help = "modules FSDP leaves alone",
       .flag = "fsdp_ignored_modules", .exports = "FSDP_IGNORED_MODULES", .export_when = W::Fsdp},
  };
  // clang-format on
}

}  // namespace accel::schema_rows
