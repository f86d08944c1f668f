// SPDX-License-Identifier: Apache-2.0
// The worker variables that come from settings, written from the schema's `exports` column as
// Accelerate 1.15 writes them (prepare_simple_launcher_cmd_env, prepare_multi_gpu_env,
// prepare_deepspeed_cmd_env and prepare_extend_env_parallelism_config in
// accelerate/utils/launch.py), so Accelerate's state and plugins in the workers read the same
// configuration they would under its launcher.
#include "lib/launch/plan/exports.h"

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/config/schema.h"
#include "lib/config/yaml_scalar.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::plan {

namespace {

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
std::string deepSpeedFieldsFromFile(const settings::KeyValues& keys) {
  std::vector<std::string> from_file;
  for (const auto& [name, setting] : keys.all()) {
    if (startsWith(name, "deepspeed_config.") && setting.origin.source == settings::Source::ConfigFile) {
      from_file.push_back(name.substr(17));
    }
  }
  if (keys.origin("mixed_precision").source == settings::Source::ConfigFile) from_file.push_back("mixed_precision");
  return toLower(join(from_file, ","));
}

// Keys a section accepts as written (its open_prefix) export as the key upper-cased
// (megatron_lm_foo -> MEGATRON_LM_FOO), as Accelerate's loop over the section does.
void exportOpenKeys(const settings::LaunchSettings& s, Env& env) {
  for (const auto& map : configSchema()) {
    if (map.open_prefix.empty() || !settings::exportApplies(map.export_when, s)) continue;
    const std::string section = std::string(map.path) + ".";
    for (const auto& [name, setting] : s.keys.all()) {
      if (startsWith(name, section) && !findKey(name) && !setting.value.is_null()) {
        env.emplace_back(toUpper(name.substr(section.size())), str(setting.value));
      }
    }
  }
}

// The schema's exports and Accelerate's paradigm switches.
void exportParadigm(const settings::LaunchSettings& s, Env& env) {
  namespace E = launch_env;
  const std::string& type = s.paradigm.distributed_type.value;
  if (type == "DEEPSPEED") {
    env.emplace_back(E::kUseDeepSpeed, "true");
    env.emplace_back(E::kConfigDsFields, deepSpeedFieldsFromFile(s.keys));
  }
  if (type == "FSDP") env.emplace_back(E::kUseFsdp, "true");
  if (type == "MEGATRON_LM") env.emplace_back(E::kUseMegatronLm, "true");
  if (s.paradigm.use_parallelism_config.value) env.emplace_back(E::kUseParallelismConfig, "true");
  for (const auto& spec : configSchema()) {
    if (spec.exports.empty() || !settings::exportApplies(spec.export_when, s)) continue;
    const nlohmann::json& value = s.keys.value(spec.path);
    if (!value.is_null()) exportRow(spec, value, env);
  }
  exportOpenKeys(s, env);
}

std::string pyBool(bool v) { return v ? "True" : "False"; }

// Accelerate's own variables: its simple launcher (one process, and mpirun) always says whether
// the job runs on CPUs, torchrun's path only when it does (accel's own several CPU workers).
void exportAccelerate(const settings::LaunchSettings& s, const facts::Machine& f, bool torchrun_shaped, Env& env) {
  namespace E = launch_env;
  const bool cpu = s.paradigm.use_cpu.value;
  if (!torchrun_shaped || cpu) env.emplace_back(E::kUseCpu, pyBool(cpu));
  if (cpu) {  // Accelerate's Intel OpenMP settings for CPU jobs (libgomp ignores them)
    env.insert(env.end(), {{E::kKmpAffinity, "granularity=fine,compact,1,0"}, {E::kKmpBlocktime, "1"}});
  }
  if (!cpu && s.keys.text("gpu_ids") != "all") env.emplace_back(E::kCudaVisibleDevices, s.keys.text("gpu_ids"));
  if (s.paradigm.distributed_type.value == "DEEPSPEED") {  // as Accelerate: the script's directory imports
    const std::string path = f.variable(E::kPythonPath);
    env.emplace_back(E::kPythonPath, (path.empty() ? "" : path + ":") + env::kPwd.in(f.env));
  }
  exportParadigm(s, env);
}

}  // namespace

Env settingsExports(const settings::LaunchSettings& s, const facts::Machine& f, bool torchrun_shaped) {
  namespace E = launch_env;
  Env env;
  if (s.supervision.deepspeed_env.value) {  // DeepSpeed's launcher exports nothing of torchrun's or Accelerate's
    if (s.supervision.cpu_threads.value)
      env.emplace_back(E::kOmpNumThreads, std::to_string(*s.supervision.cpu_threads.value));
    return env;
  }
  if (torchrun_shaped) env.emplace_back(E::kSignalsToHandle, s.supervision.signals_to_handle.value);
  if (s.supervision.cpu_threads.value)
    env.emplace_back(E::kOmpNumThreads, std::to_string(*s.supervision.cpu_threads.value));
  if (s.channel.collective_timeout.origin.source == settings::Source::CommandLine) {
    // From the environment, the workers inherit it.
    env.emplace_back(E::kCollectiveTimeout.name(), fmt::format("{:g}", s.channel.collective_timeout.value));
  }
  if (torchrun_shaped && f.variable(E::kNcclAsyncErrorHandling).empty())
    env.emplace_back(E::kNcclAsyncErrorHandling, "1");
  if (!s.torchrun.grammar.value) exportAccelerate(s, f, torchrun_shaped, env);  // torchrun's: none of Accelerate's
  return env;
}

}  // namespace accel::launch::plan
