// SPDX-License-Identifier: Apache-2.0
// YAML and JSON both go through yaml-cpp (JSON is YAML), which gives line:column marks for
// every node. Scalars are then typed by the schema; free-form values the way PyYAML types
// them, so a file means the same thing to accel and to Accelerate.
#include "lib/config/loader.h"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "lib/common/atomic_file.h"
#include "lib/common/strings.h"
#include "lib/config/readable_text.h"
#include "lib/config/schema.h"
#include "lib/config/validate.h"
#include "lib/config/yaml_scalar.h"

namespace accel {

namespace {

using nlohmann::json;

// Accelerate's wizard writes these fp8 names, which its own launcher never reads.
const std::map<std::string, std::string> kRenamedKeys = {
    {"fp8_config.amax_history_length", "amax_history_len"},
    {"fp8_config.amax_compute_algorithm", "amax_compute_algo"},
    {"fp8_config.optimization_level", "opt_level"},
};

bool isQuoted(const YAML::Node& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

// A scalar's text. yaml-cpp decodes the escapes \_ and \N to single bytes, not UTF-8.
std::string scalarOf(const YAML::Node& node) { return repairYamlCppEscapes(node.Scalar()); }

std::string kindOf(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "'" + scalarOf(node) + "'";
}

class Loader {
 public:
  explicit Loader(std::string path) : json_(isJsonPath(path)) {
    result_.config.path = std::move(path);
  }

  LoadResult run(const std::string& text) {
    // Before yaml-cpp, which reads bytes PyYAML refuses (and the writer could not write back).
    if (auto bad = findUnreadableText(text)) {
      result_.errors.push_back({fmt::format("{}:{}:{}", result_.config.path, bad->line, bad->column), bad->message,
                                "save the file as UTF-8 text; write special characters as escapes in a "
                                "double-quoted string (\"\\t\", \"\\u00e9\")"});
      return std::move(result_);
    }
    values_left_ = text.size() + 1024;
    YAML::Node root;
    try {
      root = YAML::Load(json_ ? combineJsonSurrogates(text) : text);
    } catch (const YAML::Exception& e) {
      error(e.mark, "invalid YAML: " + e.msg,
            "fix the syntax at that position (indent nested keys with spaces, not tabs)");
      return std::move(result_);
    }
    if (!root.IsDefined() || root.IsNull()) {
      error(YAML::Mark::null_mark(), "the file is empty",
            "a config needs at least `distributed_type`; `accel config` writes a complete one");
      return std::move(result_);
    }
    if (!root.IsMap()) {
      error(root.Mark(), "expected a map of keys at the top level, got " + kindOf(root));
      return std::move(result_);
    }
    loadMap(root, "", result_.config.values);
    normalise();
    if (result_.errors.empty()) {
      for (auto& d : checkConsistency(result_.config)) result_.errors.push_back(std::move(d));
    }
    return std::move(result_);
  }

 private:
  static constexpr int kMaxDepth = 256;  // Accelerate's files nest 3 levels
  LoadResult result_;
  const bool json_;  // a .json file: JSON number syntax applies to unquoted scalars
  size_t values_left_ = 0;  // values untyped() may still build (see there)
  bool too_big_ = false;
  json legacy_fp16_;
  json legacy_dynamo_;
  YAML::Mark legacy_dynamo_mark_;

  std::string at(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return result_.config.path;
    return fmt::format("{}:{}:{}", result_.config.path, m.line + 1, m.column + 1);
  }

  void error(const YAML::Mark& m, std::string message, std::string hint = {}) {
    result_.errors.push_back({at(m), std::move(message), std::move(hint)});
  }

  void loadMap(const YAML::Node& map, const std::string& map_path, json& out) {
    const KeySpec* map_spec = map_path.empty() ? nullptr : findKey(map_path);
    std::map<std::string, YAML::Mark> seen;
    for (const auto& item : map) {
      const YAML::Node& key_node = item.first;
      if (!key_node.IsScalar()) {
        error(key_node.Mark(), "a key must be a plain name, got " + kindOf(key_node));
        continue;
      }
      std::string key = scalarOf(key_node);
      std::string shown = map_path.empty() ? key : map_path + "." + key;
      if (map_spec && !map_spec->add_prefix.empty() && !startsWith(key, map_spec->add_prefix)) {
        std::string prefixed = std::string(map_spec->add_prefix) + key;
        if (findKey(map_path + "." + prefixed)) {
          result_.notes.push_back(fmt::format("renamed {} to {}.{}", shown, map_path, prefixed));
          key = prefixed;
        }
      }
      if (auto renamed = kRenamedKeys.find(shown); renamed != kRenamedKeys.end()) {
        result_.notes.push_back(fmt::format(
            "renamed {} to {}.{} (the name Accelerate's launcher reads)", shown, map_path,
            renamed->second));
        key = renamed->second;
      }
      if (auto [it, fresh] = seen.emplace(key, key_node.Mark()); !fresh) {
        error(key_node.Mark(), fmt::format("duplicate key '{}' (first defined at line {})", key,
                                           it->second.line + 1),
              "keep one of the two lines");
        continue;
      }
      loadEntry(map_path, map_spec, key, key_node.Mark(), item.second, out);
    }
  }

  void loadEntry(const std::string& map_path, const KeySpec* map_spec, const std::string& key,
                 const YAML::Mark& key_mark, const YAML::Node& value, json& out) {
    const std::string dotted = map_path.empty() ? key : map_path + "." + key;
    if (map_path.empty() && key == "fp16") {  // legacy: fp16: true -> mixed_precision: fp16
      legacy_fp16_ = untyped(value);
      return;
    }
    if (map_path.empty() && key == "dynamo_backend") {  // legacy top-level dynamo_backend
      legacy_dynamo_ = untyped(value);
      legacy_dynamo_mark_ = key_mark;
      return;
    }
    const KeySpec* spec = findKey(dotted);
    if (!spec) {
      if (map_spec && !map_spec->open_prefix.empty() && startsWith(key, map_spec->open_prefix)) {
        out[key] = untyped(value);
        result_.config.marks[dotted] = toMark(key_mark);
        return;
      }
      unknownKey(map_path, key, key_mark);
      return;
    }
    std::optional<json> converted = convert(*spec, value, dotted);
    if (!converted) return;
    if (converted->is_null()) return;  // `key:` or `key: null` means "not set", as in Accelerate
    if (spec->type == ValueType::Map) {
      out[key] = json::object();
      result_.config.marks[dotted] = toMark(key_mark);
      loadMap(value, dotted, out[key]);
      return;
    }
    out[key] = std::move(*converted);
    result_.config.marks[dotted] = toMark(key_mark);
  }

  static Mark toMark(const YAML::Mark& m) { return {m.line + 1, m.column + 1}; }

  void unknownKey(const std::string& map_path, const std::string& key, const YAML::Mark& mark) {
    std::vector<std::string> known = childKeys(map_path);
    if (map_path.empty()) {
      known.push_back("fp16");
      known.push_back("dynamo_backend");
    }
    std::string where = map_path.empty() ? "" : " in " + map_path;
    std::string hint;
    if (auto guess = didYouMean(key, known)) {
      hint = fmt::format("did you mean '{}'?", *guess);
    } else if (!map_path.empty()) {
      hint = "known keys here: " + join(childKeys(map_path), ", ");
    } else {
      hint = "remove it; `accel config show` lists every key accel knows";
    }
    error(mark, fmt::format("unknown key '{}'{}", key, where), hint);
  }

  // Converts a node by its schema type; nullopt after reporting an error, null for "unset".
  std::optional<json> convert(const KeySpec& spec, const YAML::Node& node,
                              const std::string& dotted) {
    if (node.IsNull()) return json();
    if (spec.type == ValueType::Map) {
      if (node.IsMap()) return json::object();
      return typeError(spec, node, dotted);
    }
    if (spec.type == ValueType::List) {
      if (node.IsSequence()) return untyped(node);
      return typeError(spec, node, dotted);
    }
    if (!node.IsScalar()) return typeError(spec, node, dotted);
    const std::string text = scalarOf(node);
    const bool quoted = isQuoted(node);
    ResolvedScalar r = quoted ? ResolvedScalar{} : resolve(text);
    switch (spec.type) {
      case ValueType::Bool:
        if (r.kind == ScalarKind::Bool) return json(r.boolean);
        if (quoted && resolvePlainScalar(text).kind == ScalarKind::Bool) {
          return typeError(spec, node, dotted,
                           "remove the quotes: Accelerate reads any quoted text as true");
        }
        return typeError(spec, node, dotted);
      case ValueType::Int:
        if (r.kind != ScalarKind::Int) return typeError(spec, node, dotted, intHint(text));
        return checkRange(spec, node, dotted, r.integer);
      case ValueType::Float:
        if (r.kind == ScalarKind::Int) return json(r.integer);
        if (r.kind == ScalarKind::Float) return json(r.real);
        return typeError(spec, node, dotted);
      case ValueType::Enum:
        return checkChoice(spec, node, dotted, text);
      case ValueType::Scalar: {
        json value = untyped(node);
        if (value.is_string() && !spec.choices.empty()) return checkChoice(spec, node, dotted, text);
        return value;
      }
      case ValueType::String:
        if (r.kind == ScalarKind::Null) return json();
        return json(text);  // `gpu_ids: 1`, `main_process_ip: 10.0.0.1`: the text is meant
      default:
        return typeError(spec, node, dotted);
    }
  }

  static std::string intHint(const std::string& text) {
    auto real = parseDouble(text);
    // Only a whole number within long long's range has an integer spelling (casting a larger
    // double to long long is undefined behaviour).
    if (real && std::fabs(*real) < 9.2e18 && *real == std::trunc(*real)) {
      return fmt::format("write it as a plain integer: {}", static_cast<long long>(*real));
    }
    return {};
  }

  std::optional<json> checkRange(const KeySpec& spec, const YAML::Node& node,
                                 const std::string& dotted, long long value) {
    // Accelerate's `config update` writes num_processes: -1 for "decide at launch".
    if (dotted == "num_processes" && value == -1) {
      result_.notes.push_back("num_processes: -1 (unset) dropped; launch decides the count");
      return json();
    }
    if (value < spec.min || value > spec.max) {
      error(node.Mark(), fmt::format("{} is {}, but it must be {}", dotted, value,
                                     describeType(spec)));
      return std::nullopt;
    }
    return json(value);
  }

  std::optional<json> checkChoice(const KeySpec& spec, const YAML::Node& node,
                                  const std::string& dotted, const std::string& text) {
    for (auto choice : spec.choices) {
      if (choice == text || (spec.fold_case && toUpper(choice) == toUpper(text))) {
        return json(std::string(choice));
      }
    }
    std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
    std::string hint = "allowed values: " + join(choices, ", ");
    if (auto guess = didYouMean(text, choices)) hint = fmt::format("did you mean '{}'? ", *guess) + hint;
    error(node.Mark(), fmt::format("'{}' is not a valid value for {}", text, dotted), hint);
    return std::nullopt;
  }

  std::optional<json> typeError(const KeySpec& spec, const YAML::Node& node,
                                const std::string& dotted, std::string hint = {}) {
    error(node.Mark(), fmt::format("{} must be {}, got {}", dotted, describeType(spec),
                                   kindOf(node)),
          std::move(hint));
    return std::nullopt;
  }

  // A value with no schema type, typed the way PyYAML's safe_load types it. YAML aliases can
  // make a value contain itself, or expand exponentially ("billion laughs"): copying one out is
  // bounded by depth and by a budget of values (an alias-free file never has more values than
  // characters), reported once as an error instead of a stack overflow or an exhausted memory.
  json untyped(const YAML::Node& node, int depth = 0) {
    if (node.IsNull() || too_big_) return json();
    if (depth > kMaxDepth || values_left_-- == 0) {
      too_big_ = true;
      error(node.Mark(), fmt::format("this value nests deeper than {} levels or expands to more values than the "
                                     "file has characters (a YAML alias that contains itself, or aliases of aliases)",
                                     kMaxDepth),
            "write the values out instead of referring to them with aliases (*name)");
      return json();
    }
    if (node.IsSequence()) {
      json list = json::array();
      for (const auto& item : node) list.push_back(untyped(item, depth + 1));
      return list;
    }
    if (node.IsMap()) {
      json map = json::object();
      for (const auto& item : node) map[scalarOf(item.first)] = untyped(item.second, depth + 1);
      return map;
    }
    if (isQuoted(node)) return scalarOf(node);
    ResolvedScalar r = resolve(scalarOf(node));
    switch (r.kind) {
      case ScalarKind::Null: return json();
      case ScalarKind::Bool: return r.boolean;
      case ScalarKind::Int: return r.integer;
      case ScalarKind::Float: return r.real;
      default: return scalarOf(node);
    }
  }

  ResolvedScalar resolve(const std::string& text) const {
    ResolvedScalar r = resolvePlainScalar(text);
    if (json_ && r.kind == ScalarKind::String && isJsonNumber(text)) {
      r.kind = ScalarKind::Float;  // "1e-05": what Python's json.dumps writes for small floats
      r.real = std::strtod(text.c_str(), nullptr);  // like Python's float(): 1e999 is inf, not an error
    }
    return r;
  }

  // Accelerate's process_config, applied to what was read.
  void normalise() {
    Config& c = result_.config;
    if (!legacy_fp16_.is_null()) {
      if (!c.find("mixed_precision") && legacy_fp16_ == true) {
        c.set("mixed_precision", "fp16");
        result_.notes.push_back("converted legacy `fp16: true` to `mixed_precision: fp16`");
      } else {
        result_.notes.push_back("dropped legacy key fp16");
      }
    }
    if (!legacy_dynamo_.is_null() && !c.find("dynamo_config")) {
      std::string backend = toUpper(legacy_dynamo_.is_string() ? legacy_dynamo_.get<std::string>()
                                                                : std::string("NO"));
      const KeySpec& spec = keySpec("dynamo_config.dynamo_backend");
      if (std::find(spec.choices.begin(), spec.choices.end(), backend) == spec.choices.end()) {
        error(legacy_dynamo_mark_, fmt::format("'{}' is not a valid dynamo_backend", backend),
              "allowed values: " + join({spec.choices.begin(), spec.choices.end()}, ", "));
      } else if (backend != "NO") {
        c.set("dynamo_config.dynamo_backend", backend);
      }
      result_.notes.push_back("converted legacy top-level dynamo_backend to dynamo_config");
    }
    if (!c.find("distributed_type") && result_.errors.empty()) {
      error(YAML::Mark::null_mark(), "distributed_type is required",
            "add `distributed_type: 'NO'` for one process, MULTI_GPU for several GPUs, or "
            "MULTI_CPU for CPU workers");
    }
    if (c.resolved("compute_environment") == "AMAZON_SAGEMAKER") {
      error(toYamlMark(c.marks["compute_environment"]),
            "compute_environment AMAZON_SAGEMAKER is not supported by accel",
            "use compute_environment: LOCAL_MACHINE (accel launches on this machine or cluster)");
    }
  }

  static YAML::Mark toYamlMark(const Mark& m) {
    YAML::Mark y = YAML::Mark::null_mark();
    if (m.line > 0) {
      y.line = m.line - 1;
      y.column = m.column - 1;
      y.pos = 0;
    }
    return y;
  }
};

}  // namespace

LoadResult parseConfigText(const std::string& text, const std::string& path) {
  return Loader(path).run(text);
}

LoadResult loadConfigFile(const std::string& path) {
  if (!fileExists(path)) {
    throw ConfigError({{path, "config file does not exist",
                        "check the path, or create one with `accel config` or "
                        "`accel config default --config_file " + path + "`"}});
  }
  LoadResult result = parseConfigText(readFile(path), path);
  if (!result.errors.empty()) throw ConfigError(result.errors);
  return result;
}

}  // namespace accel
