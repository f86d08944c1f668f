// SPDX-License-Identifier: Apache-2.0
#include "lib/config/wizard_paradigms.h"

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/config/schema.h"

namespace accel::wizard {

namespace {

std::vector<std::string> choicesOf(std::string_view key) {
  const auto& spec = keySpec(key);
  const auto& menu = spec.menu_choices.empty() ? spec.choices : spec.menu_choices;
  return {menu.begin(), menu.end()};
}

// A menu over the key's schema choices; the default highlighted is the wizard default.
std::string menuFor(WizardState& s, std::string_view key, std::vector<std::string> choices = {}) {
  if (choices.empty()) choices = choicesOf(key);
  const nlohmann::json def = wizardDefault(keySpec(key));
  size_t index = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (def.is_string() && choices[i] == def.get<std::string>()) index = i;
  }
  return choices[s.ask.menu(promptFor(key), choices, index)];
}

bool yesNoFor(WizardState& s, std::string_view key) {
  return s.ask.yesNo(promptFor(key), wizardDefault(keySpec(key)).get<bool>());
}

long long intFor(WizardState& s, std::string_view key, std::string_view error = "") {
  const auto& spec = keySpec(key);
  return s.ask.integer(promptFor(key), wizardDefault(spec).get<long long>(),
                       error.empty() ? "Please enter an integer." : error, spec.min, spec.max);
}

void setYesNo(WizardState& s, const std::string& key) { s.config.set(key, yesNoFor(s, key)); }

void askDeepSpeedFields(WizardState& s) {
  const std::string p = "deepspeed_config.";
  const std::vector<std::string> stages = {"0", "1", "2", "3"};
  long long stage = static_cast<long long>(s.ask.menu(promptFor(p + "zero_stage"), stages, 2));
  s.config.set(p + "zero_stage", stage);
  if (stage >= 2) {
    std::string optimizer = menuFor(s, p + "offload_optimizer_device");
    std::string param = menuFor(s, p + "offload_param_device");
    s.config.set(p + "offload_optimizer_device", optimizer);
    s.config.set(p + "offload_param_device", param);
    if (param == "nvme") {
      s.config.set(p + "offload_param_nvme_path", s.ask.text(promptFor(p + "offload_param_nvme_path"), "/nvme"));
    }
    if (optimizer == "nvme") {
      s.config.set(p + "offload_optimizer_nvme_path",
                   s.ask.text(promptFor(p + "offload_optimizer_nvme_path"), "/nvme"));
    }
  }
  s.config.set(p + "gradient_accumulation_steps", intFor(s, p + "gradient_accumulation_steps"));
  if (s.ask.yesNo("Do you want to use gradient clipping? [yes/NO]: ", false)) {
    s.config.set(p + "gradient_clipping", s.ask.number(promptFor(p + "gradient_clipping"), 1.0));
  }
  if (stage == 3) setYesNo(s, p + "zero3_save_16bit_model");
}

void askDeepSpeedMultinode(WizardState& s) {
  const std::string p = "deepspeed_config.";
  std::string launcher = menuFor(s, p + "deepspeed_multinode_launcher");
  s.config.set(p + "deepspeed_multinode_launcher", launcher);
  if (launcher == "standard") return;
  s.config.set(p + "deepspeed_hostfile", s.ask.text(promptFor(p + "deepspeed_hostfile")));
  if (s.ask.yesNo("Do you want to specify exclusion filter string? [yes/NO]: ", false)) {
    s.config.set(p + "deepspeed_exclusion_filter", s.ask.text(promptFor(p + "deepspeed_exclusion_filter")));
  }
  if (s.ask.yesNo("Do you want to specify inclusion filter string? [yes/NO]: ", false)) {
    s.config.set(p + "deepspeed_inclusion_filter", s.ask.text(promptFor(p + "deepspeed_inclusion_filter")));
  }
}

void askParallelism(WizardState& s) {
  if (!s.ask.yesNo("Do you want to use the parallelism config? [yes/NO]: ", false)) return;
  const std::string p = "parallelism_config.parallelism_config_";
  for (const char* size : {"dp_replicate_size", "dp_shard_size", "tp_size", "cp_size"}) {
    s.config.set(p + size, intFor(s, p + size));
  }
  if (s.config.find(p + "cp_size")->get<long long>() > 1) {
    s.config.set(p + "cp_comm_strategy", menuFor(s, p + "cp_comm_strategy"));
  }
}

void askFsdpWrapping(WizardState& s) {
  const std::string p = "fsdp_config.";
  std::string policy = menuFor(s, p + "fsdp_auto_wrap_policy");
  s.config.set(p + "fsdp_auto_wrap_policy", policy);
  if (policy == "TRANSFORMER_BASED_WRAP") {
    if (!s.ask.yesNo("Do you want to use the model's `_no_split_modules` to wrap. Only "
                     "applicable for \xF0\x9F\xA4\x97 Transformers [yes/NO]: ",
                     false)) {
      s.config.set(p + "fsdp_transformer_layer_cls_to_wrap",
                   s.ask.text(promptFor(p + "fsdp_transformer_layer_cls_to_wrap"), ""));
    }
  } else if (policy == "SIZE_BASED_WRAP") {
    s.config.set(p + "fsdp_min_num_params",
                 intFor(s, p + "fsdp_min_num_params", "Please enter a whole number such as 100000000 (not 1e8)."));
  }
}

}  // namespace

void askDynamo(WizardState& s) {
  s.dynamo = s.ask.yesNo("Do you wish to optimize your script with torch dynamo?[yes/NO]:", false);
  if (!s.dynamo) return;
  const std::string p = "dynamo_config.";
  const std::vector<std::string> backends = {
      "eager",  "aot_eager", "inductor", "aot_ts_nvfuser",          "nvprims_nvfuser",     "cudagraphs", "ofi",
      "fx2trt", "onnxrt",    "tensorrt", "aot_torchxla_trace_once", "torchxla_trace_once", "tvm"};
  s.config.set(p + "dynamo_backend", toUpper(backends[s.ask.menu(promptFor(p + "dynamo_backend"), backends, 2)]));
  if (!s.ask.yesNo("Do you want to customize the defaults sent to torch.compile? [yes/NO]: ", false)) {
    return;
  }
  s.config.set(p + "dynamo_mode", menuFor(s, p + "dynamo_mode"));
  for (const char* key : {"dynamo_use_fullgraph", "dynamo_use_dynamic", "dynamo_use_regional_compilation"}) {
    setYesNo(s, p + key);
  }
}

void askDeepSpeed(WizardState& s) {
  if (!s.ask.yesNo("Do you want to use DeepSpeed? [yes/NO]: ", false)) return;
  s.type = "DEEPSPEED";
  const std::string p = "deepspeed_config.";
  s.deepspeed_json = s.ask.yesNo("Do you want to specify a json file to a DeepSpeed config? [yes/NO]: ", false);
  if (s.deepspeed_json) {
    s.config.set(p + "deepspeed_config_file", s.ask.text(promptFor(p + "deepspeed_config_file"), "none"));
  } else {
    askDeepSpeedFields(s);
  }
  setYesNo(s, p + "zero3_init_flag");
  if (s.ask.yesNo("Do you want to enable Mixture-of-Experts training (MoE)? [yes/NO]: ", false)) {
    s.config.set(p + "deepspeed_moe_layer_cls_names", s.ask.text(promptFor(p + "deepspeed_moe_layer_cls_names")));
  }
  if (s.num_machines > 1) askDeepSpeedMultinode(s);
}

void askFsdp(WizardState& s) {
  if (!s.ask.yesNo("Do you want to use FullyShardedDataParallel? [yes/NO]: ", false)) return;
  s.type = "FSDP";
  const std::string p = "fsdp_config.";
  const long long version = s.ask.menu(promptFor(p + "fsdp_version"), {"1", "2"}, 1) == 0 ? 1 : 2;
  s.config.set(p + "fsdp_version", version);
  if (version == 2) {
    setYesNo(s, p + "fsdp_reshard_after_forward");
  } else {  // v1 asks for a sharding strategy but stores it under fsdp_reshard_after_forward
    s.config.set(p + "fsdp_reshard_after_forward", menuFor(s, p + "fsdp_sharding_strategy"));
  }
  setYesNo(s, p + "fsdp_offload_params");
  askFsdpWrapping(s);
  if (version == 1) s.config.set(p + "fsdp_backward_prefetch", menuFor(s, p + "fsdp_backward_prefetch"));
  s.config.set(p + "fsdp_state_dict_type",
               version == 1 ? menuFor(s, p + "fsdp_state_dict_type")
                            : menuFor(s, p + "fsdp_state_dict_type", {"SHARDED_STATE_DICT", "FULL_STATE_DICT"}));
  if (version == 1) {
    setYesNo(s, p + "fsdp_forward_prefetch");
    setYesNo(s, p + "fsdp_use_orig_params");
  }
  const bool efficient = yesNoFor(s, p + "fsdp_cpu_ram_efficient_loading");
  s.config.set(p + "fsdp_cpu_ram_efficient_loading", efficient);
  if (version == 1) {  // efficient loading needs synced states, so Accelerate does not ask
    s.config.set(p + "fsdp_sync_module_states", efficient ? true : yesNoFor(s, p + "fsdp_sync_module_states"));
  }
  setYesNo(s, p + "fsdp_activation_checkpointing");
  if (version == 2) askParallelism(s);
}

void askMegatron(WizardState& s) {
  if (!s.ask.yesNo("Do you want to use Megatron-LM ? [yes/NO]: ", false)) return;
  s.type = "MEGATRON_LM";
  const std::string p = "megatron_lm_config.megatron_lm_";
  long long tp = intFor(s, p + "tp_degree");
  s.config.set(p + "tp_degree", tp);
  if (tp > 1) setYesNo(s, p + "sequence_parallelism");
  long long pp = intFor(s, p + "pp_degree");
  s.config.set(p + "pp_degree", pp);
  if (pp > 1) s.config.set(p + "num_micro_batches", intFor(s, p + "num_micro_batches"));
  setYesNo(s, p + "recompute_activations");
  setYesNo(s, p + "use_distributed_optimizer");
  s.config.set(p + "gradient_clipping", s.ask.number(promptFor(p + "gradient_clipping"), 1.0));
}

void askFp8(WizardState& s) {
  const std::string p = "fp8_config.";
  const std::vector<std::string> backends = {"ao", "te", "msamp"};
  std::string backend = backends[s.ask.menu(promptFor(p + "backend"), backends, 0)];
  s.config.set(p + "backend", toUpper(backend));
  if (backend == "te") {
    setYesNo(s, p + "use_autocast_during_eval");
    s.config.set(p + "margin", intFor(s, p + "margin"));
    s.config.set(p + "interval", intFor(s, p + "interval"));
    s.config.set(p + "fp8_format", menuFor(s, p + "fp8_format"));
    // Accelerate's wizard writes amax_history_length / amax_compute_algorithm, names its
    // launcher never reads; accel writes the names that take effect.
    s.config.set(p + "amax_history_len", intFor(s, p + "amax_history_len"));
    s.config.set(p + "amax_compute_algo", menuFor(s, p + "amax_compute_algo"));
    nlohmann::json precision = {false, false, false};
    if (s.ask.yesNo(promptFor(p + "override_linear_precision"), false)) {
      const char* gemms[] = {"fprop", "dgrad", "wgrad"};
      for (size_t i = 0; i < 3; ++i) {
        precision[i] =
            s.ask.yesNo(fmt::format("Should `{}` be executed in higher precision? [yes/NO]: ", gemms[i]), false);
      }
    }
    s.config.set(p + "override_linear_precision", precision);
  } else if (backend == "msamp") {
    s.config.set(p + "opt_level", menuFor(s, p + "opt_level"));
  } else {
    setYesNo(s, p + "enable_fsdp_float8_all_gather");
    setYesNo(s, p + "pad_inner_dim");
  }
}

}  // namespace accel::wizard
