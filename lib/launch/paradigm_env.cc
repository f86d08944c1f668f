// SPDX-License-Identifier: Apache-2.0
// The worker variables that come from settings, written from the schema's `exports` column as
// Accelerate 1.15 writes them (prepare_simple_launcher_cmd_env, prepare_multi_gpu_env,
// prepare_deepspeed_cmd_env and prepare_extend_env_parallelism_config in
// accelerate/utils/launch.py), so Accelerate's state and plugins in the workers read the same
// configuration they would under its launcher.
#include "lib/launch/paradigm_env.h"

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/config/schema.h"
#include "lib/config/yaml_scalar.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/launch_plan.h"

namespace accel {

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// Python's str() of a value (True/False for booleans, repr() digits for floats).
std::string str(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_float()) return pythonFloatRepr(v.get<double>());
  return v.dump();
}

void exportRow(const KeySpec& spec, const nlohmann::json& value, Env& env) {
  std::string_view exports = spec.exports;
  if (auto eq = exports.find('='); eq != std::string_view::npos) {  // "VAR=x": x when true
    if (value == true) env.emplace_back(exports.substr(0, eq), exports.substr(eq + 1));
    return;
  }
  auto names = split(exports, ',');
  auto write = [&](const nlohmann::json& v) {
    std::string text = str(v);
    return spec.export_case == ExportCase::Lower   ? toLower(text)
           : spec.export_case == ExportCase::Upper ? toUpper(text)
                                                   : text;
  };
  if (names.size() > 1 && value.is_string()) {  // "(false, true, false)": the list as Accelerate's examples write it
    const auto items = booleanTuple(value.get<std::string>());  // the loader lets only such text through
    return exportRow(spec, items ? nlohmann::json(*items) : nlohmann::json::array(), env);
  }
  if (names.size() > 1 && value.is_array()) {  // a list spreads over its variables
    for (size_t i = 0; i < names.size() && i < value.size(); ++i) env.emplace_back(names[i], write(value[i]));
  } else {
    env.emplace_back(names[0], write(value));
  }
}

// DeepSpeed's worker reads which of its settings came from the config file.
std::string deepSpeedFieldsFromFile(const LaunchSettings& s) {
  std::vector<std::string> from_file;
  for (const auto& [name, setting] : s.all()) {
    if (startsWith(name, "deepspeed_config.") && setting.origin == "config file") from_file.push_back(name.substr(17));
  }
  if (s.origin("mixed_precision") == "config file") from_file.push_back("mixed_precision");
  return toLower(join(from_file, ","));
}

// Keys a section accepts as written (its open_prefix) export as the key upper-cased
// (megatron_lm_foo -> MEGATRON_LM_FOO), as Accelerate's loop over the section does.
void exportOpenKeys(const LaunchSettings& s, Env& env) {
  for (const auto& map : configSchema()) {
    if (map.open_prefix.empty() || !exportApplies(map.export_when, s)) continue;
    const std::string section = std::string(map.path) + ".";
    for (const auto& [name, setting] : s.all()) {
      if (startsWith(name, section) && !findKey(name) && !setting.value.is_null()) {
        env.emplace_back(toUpper(name.substr(section.size())), str(setting.value));
      }
    }
  }
}

}  // namespace

Env paradigmEnv(const LaunchSettings& s) {
  namespace E = launch_env;
  Env env;
  const std::string type = s.text("distributed_type");
  if (type == "DEEPSPEED") {
    env.emplace_back(E::kUseDeepSpeed, "true");
    env.emplace_back(E::kConfigDsFields, deepSpeedFieldsFromFile(s));
  }
  if (type == "FSDP") env.emplace_back(E::kUseFsdp, "true");
  if (type == "MEGATRON_LM") env.emplace_back(E::kUseMegatronLm, "true");
  if (s.flag("use_parallelism_config")) env.emplace_back(E::kUseParallelismConfig, "true");
  for (const auto& spec : configSchema()) {
    if (spec.exports.empty() || !exportApplies(spec.export_when, s)) continue;
    const nlohmann::json& value = s.value(std::string(spec.path));
    if (!value.is_null()) exportRow(spec, value, env);
  }
  exportOpenKeys(s, env);
  return env;
}

}  // namespace accel
