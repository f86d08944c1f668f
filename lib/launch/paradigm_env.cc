// SPDX-License-Identifier: Apache-2.0
// Accelerate's exports for DeepSpeed, FSDP, Megatron-LM and FP8 (Accelerate 1.15's
// prepare_multi_gpu_env and prepare_deepspeed_cmd_env in accelerate/utils/launch.py), so
// Accelerate's plugins in the workers read the same configuration they would under its launcher.
#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/launch_plan.h"

namespace accel {

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// Python's str() of a value, lower-cased where Accelerate lower-cases it.
std::string str(const nlohmann::json& v, bool lower = false) {
  std::string out = v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "True" : "False")
                                                                          : v.dump();
  return lower ? toLower(out) : out;
}

void deepspeed(const LaunchSettings& s, Env& env) {
  env.emplace_back(launch_env::kUseDeepSpeed, "true");
  std::vector<std::string> from_file;
  for (const auto& [name, setting] : s.all()) {
    if (startsWith(name, "deepspeed_config.") && setting.origin == "config file") {
      from_file.push_back(name.substr(17));
    }
  }
  if (s.origin("mixed_precision") == "config file") from_file.push_back("mixed_precision");
  env.emplace_back(launch_env::kConfigDsFields, toLower(join(from_file, ",")));
  static const std::pair<const char*, const char*> exports[] = {
      {"zero_stage", "ACCELERATE_DEEPSPEED_ZERO_STAGE"},
      {"gradient_clipping", "ACCELERATE_GRADIENT_CLIPPING"},
      {"offload_optimizer_device", "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE"},
      {"offload_param_device", "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE"},
      {"offload_optimizer_nvme_path", "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_NVME_PATH"},
      {"offload_param_nvme_path", "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_NVME_PATH"},
      {"zero3_init_flag", "ACCELERATE_DEEPSPEED_ZERO3_INIT"},
      {"zero3_save_16bit_model", "ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL"},
      {"deepspeed_config_file", "ACCELERATE_DEEPSPEED_CONFIG_FILE"},
      {"deepspeed_moe_layer_cls_names", "ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES"}};
  for (const auto& [key, var] : exports) {
    const std::string name = std::string("deepspeed_config.") + key;
    if (s.has(name)) env.emplace_back(var, str(s.value(name), true));
  }
}

void fsdp(const LaunchSettings& s, Env& env) {
  env.emplace_back(launch_env::kUseFsdp, "true");
  auto value = [&](const char* key, const char* fallback) -> std::string {
    std::string name = std::string("fsdp_config.fsdp_") + key;
    return s.has(name) ? str(s.value(name), true) : fallback;
  };
  env.emplace_back("FSDP_VERSION", value("version", "1"));
  env.emplace_back("FSDP_SHARDING_STRATEGY", toUpper(value("sharding_strategy", "FULL_SHARD")));
  env.emplace_back("FSDP_RESHARD_AFTER_FORWARD", value("reshard_after_forward", "true"));
  env.emplace_back("FSDP_OFFLOAD_PARAMS", value("offload_params", "false"));
  env.emplace_back("FSDP_MIN_NUM_PARAMS", value("min_num_params", "100000000"));
  for (auto [key, fallback] : {std::pair{"forward_prefetch", "false"}, {"use_orig_params", "true"},
                               {"cpu_ram_efficient_loading", "true"}, {"sync_module_states", "true"},
                               {"activation_checkpointing", "false"}}) {
    env.emplace_back(std::string(launch_env::kFsdpPrefix) + toUpper(key), value(key, fallback));
  }
  // Only when set; their values keep their case (class and policy names).
  for (auto [key, var] : {std::pair{"auto_wrap_policy", "FSDP_AUTO_WRAP_POLICY"},
                          {"transformer_layer_cls_to_wrap", "FSDP_TRANSFORMER_CLS_TO_WRAP"},
                          {"backward_prefetch", "FSDP_BACKWARD_PREFETCH"},
                          {"state_dict_type", "FSDP_STATE_DICT_TYPE"},
                          {"ignored_modules", "FSDP_IGNORED_MODULES"}}) {
    std::string name = std::string("fsdp_config.fsdp_") + key;
    if (s.has(name)) env.emplace_back(var, str(s.value(name)));
  }
}

void megatron(const LaunchSettings& s, Env& env) {
  env.emplace_back(launch_env::kUseMegatronLm, "true");
  for (const auto& [name, setting] : s.all()) {
    if (startsWith(name, "megatron_lm_config.megatron_lm_") && !setting.value.is_null()) {
      env.emplace_back("MEGATRON_LM_" + toUpper(name.substr(31)), str(setting.value));
    }
  }
}

void fp8(const LaunchSettings& s, Env& env) {
  for (const auto& [name, setting] : s.all()) {
    if (!startsWith(name, "fp8_config.") || setting.value.is_null()) continue;
    std::string key = name.substr(11);
    if (key == "override_linear_precision" && setting.value.is_array() && setting.value.size() == 3) {
      const char* gemms[] = {"FPROP", "DGRAD", "WGRAD"};
      for (size_t i = 0; i < 3; ++i) env.emplace_back(std::string("ACCELERATE_FP8_OVERRIDE_") + gemms[i], str(setting.value[i]));
    } else {
      env.emplace_back("ACCELERATE_FP8_" + toUpper(key == "fp8_format" ? "format" : key), str(setting.value));
    }
  }
}

}  // namespace

Env paradigmEnv(const LaunchSettings& s) {
  Env env;
  const std::string type = s.text("distributed_type");
  if (type == "DEEPSPEED") deepspeed(s, env);
  if (type == "FSDP") fsdp(s, env);
  if (type == "MEGATRON_LM") megatron(s, env);
  if (s.text("mixed_precision") == "fp8") fp8(s, env);
  return env;
}

}  // namespace accel
