// SPDX-License-Identifier: Apache-2.0
// Writes configs byte-for-byte as Accelerate does: PyYAML safe_dump for YAML (sorted keys,
// block style, nulls and empty maps dropped at the top level, 'NO'/'no' quoted) and
// json.dumps(indent=2, sort_keys=True) for JSON.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace accel {

std::string toYaml(const nlohmann::json& values);
// PyYAML's yaml.dump(values) with its defaults, as Accelerate's `to-fsdp2` writes: toYaml's
// format, but every key kept, nulls and empty maps too.
std::string dumpYaml(const nlohmann::json& values);
std::string toJson(const nlohmann::json& values);

// YAML or JSON by the path's extension.
std::string serializeConfig(const nlohmann::json& values, const std::string& path);

// Serialises and writes atomically (temp file + rename); creates parent directories when asked.
void saveConfig(const nlohmann::json& values, const std::string& path, bool create_parents = false);

}  // namespace accel
