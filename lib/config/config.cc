// SPDX-License-Identifier: Apache-2.0
#include "lib/config/config.h"

#include <unistd.h>

#include <cstdlib>

#include "lib/common/strings.h"
#include "lib/common/user_dirs.h"
#include "lib/common/variables.h"
#include "lib/config/schema.h"

namespace accel {

const nlohmann::json* Config::find(std::string_view dotted) const {
  const nlohmann::json* node = &values;
  for (const auto& part : split(dotted, '.')) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

nlohmann::json Config::resolved(std::string_view dotted) const {
  if (const nlohmann::json* value = find(dotted)) return *value;
  // Accelerate's process_config: one process when nothing is distributed.
  if (dotted == "num_processes" && !sageMaker() && resolved("distributed_type") == "NO") return 1;
  if (const KeySpec* spec = findKey(dotted);
      spec && (dotted.find('.') != dotted.npos || inSection(*spec, sageMaker()))) {
    return fileDefault(*spec, sageMaker());
  }
  return nullptr;
}

bool Config::sageMaker() const {
  const nlohmann::json* env = find("compute_environment");
  return env && *env == "AMAZON_SAGEMAKER";
}

void Config::set(std::string_view dotted, nlohmann::json value) {
  nlohmann::json* node = &values;
  auto parts = split(dotted, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    nlohmann::json& child = (*node)[parts[i]];
    if (!child.is_object()) child = nlohmann::json::object();
    node = &child;
  }
  (*node)[parts.back()] = std::move(value);
}

void Config::erase(std::string_view dotted) {
  auto parts = split(dotted, '.');
  nlohmann::json* node = &values;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    auto it = node->find(parts[i]);
    if (it == node->end() || !it->is_object()) return;
    node = &*it;
  }
  node->erase(parts.back());
}

std::string Config::where(std::string_view dotted) const {
  auto it = marks.find(std::string(dotted));
  if (it == marks.end() || it->second.line == 0) return path.empty() ? std::string(dotted) : path;
  return path + ":" + std::to_string(it->second.line) + ":" + std::to_string(it->second.column);
}

std::string Config::lineOf(std::string_view dotted) const {
  auto it = marks.find(std::string(dotted));
  if (it == marks.end() || it->second.line == 0) return "default";
  return "line " + std::to_string(it->second.line);
}

std::string expandUser(const std::string& path) {
  if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
  return homeDirectory() + path.substr(1);
}

std::string defaultConfigDir() {
  const std::string& hf_home = env::kHfHome.value();
  if (!hf_home.empty()) return expandUser(hf_home + "/accelerate");
  return cacheDirectory() + "/huggingface/accelerate";
}

std::string defaultConfigPath() { return defaultConfigDir() + "/default_config.yaml"; }

bool isJsonPath(std::string_view path) { return path.size() >= 5 && toLower(path.substr(path.size() - 5)) == ".json"; }

}  // namespace accel
