// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/launch_settings_record.h"

namespace accel {

using nlohmann::json;

bool exportApplies(ExportWhen when, const LaunchSettings& s) {
  switch (when) {
    case ExportWhen::Always: return true;
    case ExportWhen::DeepSpeed: return s.text("distributed_type") == "DEEPSPEED";
    case ExportWhen::NotDeepSpeed: return s.text("distributed_type") != "DEEPSPEED";
    case ExportWhen::Fsdp: return s.text("distributed_type") == "FSDP";
    case ExportWhen::MegatronLm: return s.text("distributed_type") == "MEGATRON_LM";
    case ExportWhen::Fp8: return s.text("mixed_precision") == "fp8";
    case ExportWhen::Parallelism: return s.flag("use_parallelism_config");
    case ExportWhen::ContextParallel:
      return s.flag("use_parallelism_config") && s.integer("parallelism_config.parallelism_config_cp_size") > 1;
    case ExportWhen::SequenceParallel:
      return s.flag("use_parallelism_config") && s.integer("parallelism_config.parallelism_config_sp_size") > 1;
  }
  return false;
}

bool isGpuType(const std::string& t) {
  return t == "MULTI_GPU" || t == "DEEPSPEED" || t == "FSDP" || t == "MEGATRON_LM";
}

const json& LaunchSettings::value(const std::string& name) const {
  static const json null;
  auto it = items_.find(name);
  return it == items_.end() ? null : it->second.value;
}

const std::string& LaunchSettings::origin(const std::string& name) const {
  static const std::string none = "unset";
  auto it = items_.find(name);
  return it == items_.end() ? none : it->second.origin;
}

long long LaunchSettings::integer(const std::string& name) const {
  const json& v = value(name);
  return v.is_number() ? v.get<long long>() : 0;
}

std::string LaunchSettings::text(const std::string& name) const {
  const json& v = value(name);
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

bool LaunchSettings::flag(const std::string& name) const { return value(name) == true; }

bool LaunchSettings::has(const std::string& name) const {
  auto it = items_.find(name);
  return it != items_.end() && !it->second.value.is_null();
}

void LaunchSettings::set(const std::string& name, json v, std::string origin) {
  items_[name] = {std::move(v), std::move(origin)};
}

}  // namespace accel
