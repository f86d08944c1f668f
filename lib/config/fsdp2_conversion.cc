// SPDX-License-Identifier: Apache-2.0
#include "lib/config/fsdp2_conversion.h"

#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "lib/config/config_file.h"
#include "lib/config/readable_text.h"
#include "lib/config/yaml_scalar.h"
#include "lib/config/yaml_values.h"

namespace accel {

namespace {

using nlohmann::json;

// Accelerate's ARGUMENT_KEY_MAPPING: what each FSDP1 key becomes. Keys it does not list are kept.
const std::map<std::string, std::string> kRenamed = {
    {"fsdp_sharding_strategy", "fsdp_reshard_after_forward"},
};
// The keys dropped with a warning, and why: FSDP2 removed the first three; PyTorch's FSDP2 offers
// no forward prefetch option for Accelerate to map fsdp_forward_prefetch to.
const std::map<std::string, std::string> kDropped = {
    {"fsdp_backward_prefetch", "has been removed in FSDP2"},
    {"fsdp_sync_module_states", "has been removed in FSDP2"},
    {"fsdp_use_orig_params", "has been removed in FSDP2"},
    {"fsdp_forward_prefetch", "has no counterpart in PyTorch's FSDP2"},
};
// Its ARGUMENT_VALUE_MAPPING: the keys whose strategy names become booleans.
const std::set<std::string> kStrategyKeys = {"fsdp_sharding_strategy", "fsdp_reshard_after_forward"};
const std::map<std::string, bool> kReshards = {
    {"FULL_SHARD", true},          {"SHARD_GRAD_OP", false}, {"HYBRID_SHARD", true},
    {"HYBRID_SHARD_ZERO2", false}, {"NO_SHARD", false},
};

constexpr size_t kMaxListed = 20;  // as the loader: a wrong file is not described line by line

std::string at(const std::string& path, const YAML::Mark& m) {
  if (m.is_null() || m.line < 0) return path;
  return fmt::format("{}:{}:{}", path, m.line + 1, m.column + 1);
}

json strategyValue(const FsdpEntry& entry) {
  if (entry.value.is_structured()) {  // Python's dict lookup fails on a list or a map
    throw ConfigError({{entry.where,
                        fmt::format("fsdp_config.{} must be a sharding strategy, got {}", entry.key,
                                    entry.value.is_array() ? "a list" : "a map"),
                        "write one of FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, HYBRID_SHARD_ZERO2, NO_SHARD"}});
  }
  if (entry.value.is_string()) {
    if (auto found = kReshards.find(entry.value.get<std::string>()); found != kReshards.end()) return found->second;
  }
  return entry.value;
}

// Python's truth value of a YAML value: what `if not fsdp_config` skips.
bool truthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  return !v.empty();  // strings, lists, maps
}

bool isQuoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

// Where PyYAML's value would be written back otherwise than accel can: an explicit tag, a date,
// an integer past 64 bits, YAML 1.1's merge key `<<` and value key `=`.
std::string unwritable(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  if (!tag.empty() && tag != "?" && tag != "!" && tag != "tag:yaml.org,2002:str" && tag != "tag:yaml.org,2002:map" &&
      tag != "tag:yaml.org,2002:seq") {
    return "the tag " + tag;
  }
  if (!node.IsScalar() || isQuoted(node)) return {};
  const std::string text = scalarOf(node);
  const ResolvedScalar r = resolvePlainScalar(text);
  if (r.kind == ScalarKind::Timestamp) return "a date";
  if (r.kind == ScalarKind::Special) return "'" + text + "'";
  if (r.kind == ScalarKind::String && matchesYamlInt(text)) return "an integer past 64 bits";
  return {};
}

// Every key must be a name, every value one accel writes back as PyYAML does. Runs after
// ValueReader::untyped, whose budget bounds this walk too.
void checkNode(const YAML::Node& node, const std::string& path, std::vector<Diagnostic>& found) {
  if (found.size() >= kMaxListed) return;
  if (std::string what = unwritable(node); !what.empty()) {
    found.push_back({at(path, node.Mark()), "accel cannot write back " + what + " as PyYAML would",
                     "quote the value to keep it as text"});
    return;
  }
  if (node.IsSequence()) {
    for (const auto& item : node) checkNode(item, path, found);
  } else if (node.IsMap()) {
    for (const auto& item : node) {
      const YAML::Node& key = item.first;
      if (!key.IsScalar() || (!isQuoted(key) && resolvePlainScalar(scalarOf(key)).kind != ScalarKind::String)) {
        found.push_back({at(path, key.Mark()), "a key must be a name, got " + kindOf(key),
                         "write the key as a plain name; quote it if it looks like a number or a boolean"});
        continue;
      }
      checkNode(item.second, path, found);
    }
  }
}

YAML::Node parse(const std::string& path, const std::string& text) {
  if (auto bad = findUnreadableText(text)) {
    throw ConfigError({{fmt::format("{}:{}:{}", path, bad->line, bad->column), bad->message,
                        "save the file as UTF-8 text; write special characters as escapes in a "
                        "double-quoted string (\"\\t\", \"\\u00e9\")"}});
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError({{at(path, e.mark), "invalid YAML: " + e.msg,
                        "fix the syntax at that position (indent nested keys with spaces, not tabs)"}});
  }
}

// The node of the last `fsdp_config:` (PyYAML keeps the last of a key given twice).
std::optional<YAML::Node> fsdpNode(const YAML::Node& root) {
  std::optional<YAML::Node> found;
  for (const auto& item : root) {
    if (scalarOf(item.first) == "fsdp_config") found = item.second;
  }
  return found;
}

// fsdp_config's keys in the order of their first place in the file, each with its last value,
// as a Python dict built by safe_load iterates.
std::vector<FsdpEntry> entriesOf(const YAML::Node& fsdp, const json& values, const std::string& path) {
  std::vector<FsdpEntry> entries;
  std::set<std::string> seen;
  for (const auto& item : fsdp) {
    const std::string key = scalarOf(item.first);
    if (seen.insert(key).second) entries.push_back({key, values.at(key), at(path, item.first.Mark())});
  }
  return entries;
}

json readRoot(const std::string& path, const std::string& text, const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull() || (root.IsMap() && root.size() == 0)) {
    throw ConfigError({{path, "the config file is empty", "pass the FSDP config that `accel config` wrote"}});
  }
  if (!root.IsMap()) {
    throw ConfigError({{at(path, root.Mark()), "expected a map of keys at the top level, got " + kindOf(root),
                        "pass an Accelerate config file (`accel config` writes one)"}});
  }
  ValueReader reader(/*json=*/false, text.size());
  json values = reader.untyped(root);
  if (const auto& where = reader.overflow()) {
    throw ConfigError({{at(path, *where),
                        fmt::format("this value nests deeper than {} levels or, through YAML aliases, expands to "
                                    "more values than the file has characters",
                                    ValueReader::kMaxDepth),
                        "write the values out instead of referring to them with aliases (*name)"}});
  }
  std::vector<Diagnostic> found;
  checkNode(root, path, found);
  if (!found.empty()) throw ConfigError(found);
  return values;
}

}  // namespace

json convertFsdpEntries(const std::vector<FsdpEntry>& entries, std::vector<Diagnostic>& warnings) {
  json converted = json::object();
  for (const auto& entry : entries) {
    if (auto dropped = kDropped.find(entry.key); dropped != kDropped.end()) {
      warnings.push_back({entry.where, fmt::format("fsdp_config.{} {}: dropped", entry.key, dropped->second), {}});
      continue;
    }
    auto renamed = kRenamed.find(entry.key);
    const std::string& key = renamed == kRenamed.end() ? entry.key : renamed->second;
    converted[key] = kStrategyKeys.count(entry.key) ? strategyValue(entry) : entry.value;
  }
  converted["fsdp_version"] = 2;
  return converted;
}

Fsdp2Conversion convertFileToFsdp2(const std::string& path) {
  const std::string text = readConfigText(path);
  const YAML::Node root = parse(path, text);
  Fsdp2Conversion result;
  result.config = readRoot(path, text, root);
  const std::optional<YAML::Node> fsdp = fsdpNode(root);
  json* section = fsdp ? &result.config["fsdp_config"] : nullptr;
  if (!section || !truthy(*section)) {
    throw ConfigError(
        {{fsdp ? at(path, fsdp->Mark()) : path, "no fsdp_config in this file: nothing to convert to FSDP2",
          "pass a config with distributed_type: FSDP and its fsdp_config (`accel config` writes one)"}});
  }
  if (!section->is_object()) {
    throw ConfigError({{at(path, fsdp->Mark()), "fsdp_config must be a map of fsdp_* keys, got " + kindOf(*fsdp),
                        "write fsdp_config's keys indented below it, as `accel config` does"}});
  }
  if (auto version = section->find("fsdp_version");
      version != section->end() && version->is_number() && *version == 2) {
    result.already_fsdp2 = true;
    result.warnings.push_back(
        {at(path, (*fsdp)["fsdp_version"].Mark()),
         "fsdp_config.fsdp_version is already 2: nothing converted, the config is written as it is",
         "if its keys still have FSDP1 names, set fsdp_version to 1 and run accel to-fsdp2 again"});
    return result;
  }
  *section = convertFsdpEntries(entriesOf(*fsdp, *section, path), result.warnings);
  return result;
}

}  // namespace accel
