// SPDX-License-Identifier: Apache-2.0
// A configuration as read from (or about to be written to) a default_config.yaml, plus where
// each value came from. Plain value type; not thread-safe for concurrent mutation.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace accel {

// 1-based position of a key in its file; 0 when unknown.
struct Mark {
  int line = 0;
  int column = 0;
};

struct Config {
  std::string path;                                  // file it was read from; empty when none
  nlohmann::json values = nlohmann::json::object();  // keys sorted, like PyYAML writes them
  std::map<std::string, Mark> marks;                 // dotted key path -> where the key is in `path`

  // The value at a dotted path ("fsdp_config.fsdp_version"), or nullptr when absent.
  const nlohmann::json* find(std::string_view dotted) const;
  // The value, else the schema's file default (for this file's config class), else null.
  nlohmann::json resolved(std::string_view dotted) const;
  // compute_environment is AMAZON_SAGEMAKER: Accelerate reads the file as a SageMakerConfig.
  bool sageMaker() const;
  // Sets a value, creating parent maps.
  void set(std::string_view dotted, nlohmann::json value);
  void erase(std::string_view dotted);
  // "path:line:column" for a key read from a file, else the path alone (or the key name).
  std::string where(std::string_view dotted) const;
  // "line N" for a key read from a file, else "default".
  std::string lineOf(std::string_view dotted) const;
};

// Accelerate's cache directory: $HF_HOME/accelerate, else
// ${XDG_CACHE_HOME:-~/.cache}/huggingface/accelerate, with "~" expanded.
std::string defaultConfigDir();
// <defaultConfigDir()>/default_config.yaml
std::string defaultConfigPath();
// Replaces a leading "~" or "~/" with the home directory.
std::string expandUser(const std::string& path);
// True when the path names a JSON file (".json" suffix, any case).
bool isJsonPath(std::string_view path);

}  // namespace accel
