// SPDX-License-Identifier: Apache-2.0
// YAML and JSON both go through yaml-cpp (JSON is YAML, after its own syntax check), which
// gives line:column marks for every node. Values are then typed by the schema, free-form ones
// the way PyYAML types them (yaml_values.h), so a file means the same to accel and Accelerate.
#include "lib/config/loader.h"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "lib/common/strings.h"
#include "lib/config/accelerate_rules.h"
#include "lib/config/config_file.h"
#include "lib/config/json_syntax.h"
#include "lib/config/readable_text.h"
#include "lib/config/schema.h"
#include "lib/config/validate.h"
#include "lib/config/yaml_values.h"

namespace accel {

namespace {

using nlohmann::json;

// Accelerate's wizard writes these fp8 names, which its own launcher never reads.
const std::map<std::string, std::string> kRenamedKeys = {
    {"fp8_config.amax_history_length", "amax_history_len"},
    {"fp8_config.amax_compute_algorithm", "amax_compute_algo"},
    {"fp8_config.optimization_level", "opt_level"},
};

class Loader {
 public:
  explicit Loader(std::string path) : json_(isJsonPath(path)) { result_.config.path = std::move(path); }

  LoadResult run(const std::string& text) {
    if (!readable(text)) return std::move(result_);
    YAML::Node root;
    try {
      root = YAML::Load(json_ ? combineJsonSurrogates(text) : text);
    } catch (const YAML::Exception& e) {
      if (json_) {  // valid JSON that yaml-cpp cannot read (a lone surrogate escape)
        error(e.mark, "cannot read this JSON value: " + e.msg, "write the character itself, or as a surrogate pair");
      } else {
        error(e.mark, "invalid YAML: " + e.msg,
              "fix the syntax at that position (indent nested keys with spaces, not tabs)");
      }
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
    values_ = std::make_unique<ValueReader>(json_, text.size());
    sagemaker_ = isSageMaker(root);
    loadMap(root, "", result_.config.values);
    finish();
    return std::move(result_);
  }

 private:
  static constexpr size_t kMaxListed = 20;
  LoadResult result_;
  const bool json_;  // a .json file: JSON's syntax and numbers apply
  bool sagemaker_ = false;
  std::unique_ptr<ValueReader> values_;
  size_t unlisted_ = 0, unlisted_notes_ = 0;
  LegacyKeys legacy_;

  // What PyYAML or Python's json.load refuses, before yaml-cpp (which reads more).
  bool readable(const std::string& text) {
    if (auto bad = findUnreadableText(text, json_)) {
      result_.errors.push_back({fmt::format("{}:{}:{}", result_.config.path, bad->line, bad->column), bad->message,
                                "save the file as UTF-8 text; write special characters as escapes in a "
                                "double-quoted string (\"\\t\", \"\\u00e9\")"});
      return false;
    }
    if (json_) {
      if (auto bad = checkJsonSyntax(text)) {
        result_.errors.push_back(
            {fmt::format("{}:{}:{}", result_.config.path, bad->line, bad->column), bad->message, bad->hint});
        return false;
      }
    }
    return true;
  }

  // Accelerate picks the config class by compute_environment before it reads anything else.
  static bool isSageMaker(const YAML::Node& root) {
    for (const auto& item : root) {
      if (item.first.IsScalar() && item.first.Scalar() == "compute_environment" && item.second.IsScalar()) {
        return item.second.Scalar() == "AMAZON_SAGEMAKER";
      }
    }
    return false;
  }

  std::string at(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return result_.config.path;
    return fmt::format("{}:{}:{}", result_.config.path, m.line + 1, m.column + 1);
  }

  // At most kMaxListed errors and problems are described; the rest are counted, so a file of
  // thousands of wrong keys costs neither time (hints are edit distances) nor pages of output.
  bool listing() const { return result_.errors.size() + result_.problems.size() < kMaxListed; }
  void report(std::vector<Diagnostic>& to, const YAML::Mark& m, std::string message, std::string hint) {
    if (!listing()) return void(++unlisted_);
    to.push_back({at(m), std::move(message), std::move(hint)});
  }
  void error(const YAML::Mark& m, std::string message, std::string hint = {}) {
    report(result_.errors, m, std::move(message), std::move(hint));
  }
  void problem(const YAML::Mark& m, std::string message, std::string hint = {}) {
    report(result_.problems, m, std::move(message), std::move(hint));
  }
  void note(std::string text) {
    if (result_.notes.size() < kMaxListed) return result_.notes.push_back(std::move(text));
    ++unlisted_notes_;
  }
  void warning(const YAML::Mark& m, std::string message, std::string hint = {}) {
    if (result_.warnings.size() < kMaxListed) result_.warnings.push_back({at(m), std::move(message), std::move(hint)});
  }

  void loadMap(const YAML::Node& map, const std::string& map_path, json& out) {
    const KeySpec* map_spec = map_path.empty() ? nullptr : findKey(map_path);
    std::map<std::string, YAML::Mark> seen;
    for (const auto& item : map) {
      const YAML::Node& key_node = item.first;
      if (!values_->charge(key_node)) return;  // aliases as keys: the budget of copies counts them too
      if (!key_node.IsScalar()) {
        error(key_node.Mark(), "a key must be a plain name, got " + kindOf(key_node));
        continue;
      }
      const std::string key = keyName(map_path, map_spec, scalarOf(key_node));
      if (auto [it, fresh] = seen.emplace(key, key_node.Mark()); !fresh) {  // PyYAML keeps the last
        warning(key_node.Mark(),
                fmt::format("'{}' is given twice, at lines {} and {}: the last one counts, as in Accelerate", key,
                            it->second.line + 1, key_node.Mark().line + 1),
                "keep one of the two lines");
        forget(out, map_path.empty() ? key : map_path + "." + key, key);
        it->second = key_node.Mark();
      }
      loadEntry(map_path, map_spec, key, key_node.Mark(), item.second, out);
    }
  }

  // The name a key is stored under: renamed where Accelerate reads another spelling.
  std::string keyName(const std::string& map_path, const KeySpec* map_spec, std::string key) {
    const std::string shown = map_path.empty() ? key : map_path + "." + key;
    if (map_spec && !map_spec->add_prefix.empty() && !startsWith(key, map_spec->add_prefix)) {
      const std::string prefixed = std::string(map_spec->add_prefix) + key;
      if (findKey(map_path + "." + prefixed)) {
        note(fmt::format("renamed {} to {}.{}", shown, map_path, prefixed));
        return prefixed;
      }
    }
    if (auto renamed = kRenamedKeys.find(shown); renamed != kRenamedKeys.end()) {
      note(fmt::format("renamed {} to {}.{} (the name Accelerate's launcher reads)", shown, map_path, renamed->second));
      return renamed->second;
    }
    return key;
  }

  // A key given again: what its first value left behind goes.
  void forget(json& out, const std::string& dotted, const std::string& key) {
    out.erase(key);
    auto& marks = result_.config.marks;
    marks.erase(dotted);
    const std::string inside = dotted + ".";  // its nested keys sort together, right after it
    auto it = marks.lower_bound(inside);
    while (it != marks.end() && startsWith(it->first, inside)) it = marks.erase(it);
  }

  void loadEntry(const std::string& map_path, const KeySpec* map_spec, const std::string& key,
                 const YAML::Mark& key_mark, const YAML::Node& value, json& out) {
    const std::string dotted = map_path.empty() ? key : map_path + "." + key;
    if (map_path.empty() && key == "fp16") {  // legacy: fp16: true -> mixed_precision: fp16
      legacy_.fp16 = values_->untyped(value);
      return;
    }
    if (map_path.empty() && key == "dynamo_backend") {  // legacy top-level dynamo_backend
      legacy_.dynamo_backend = values_->untyped(value);
      legacy_.dynamo_mark = toMark(key_mark);
      return;
    }
    const KeySpec* spec = findKey(dotted);
    if (spec && map_path.empty() && !inSection(*spec, sagemaker_)) spec = nullptr;
    if (!spec) return unknownKey(map_path, map_spec, key, key_mark, value, out);
    ValueReader::Typed typed = values_->typed(*spec, value, dotted, sagemaker_);
    if (!typed.note.empty()) note(typed.note);
    if (!typed.value) {  // kept as Accelerate keeps it; refused where it would be used
      if (spec->checked_on_load) return error(value.Mark(), typed.problem, typed.hint);
      problem(value.Mark(), typed.problem, typed.hint);
      typed.value = values_->untyped(value);
    }
    if (typed.value->is_null()) return;  // `key:` or `key: null` means "not set", as in Accelerate
    result_.config.marks[dotted] = toMark(key_mark);
    if (spec->type == ValueType::Map && value.IsMap()) {
      out[key] = json::object();
      return loadMap(value, dotted, out[key]);
    }
    out[key] = std::move(*typed.value);
  }

  static Mark toMark(const YAML::Mark& m) { return {m.line + 1, m.column + 1}; }

  // Accelerate refuses a top-level key its config class lacks; inside a section it keeps any
  // key (its launch reads the ones it knows): kept as written, with a warning unless the
  // section takes such keys (megatron_lm_*, parallelism_config_*).
  void unknownKey(const std::string& map_path, const KeySpec* map_spec, const std::string& key, const YAML::Mark& mark,
                  const YAML::Node& value, json& out) {
    if (map_path.empty()) {
      if (!listing()) return void(++unlisted_);
      return error(mark, fmt::format("unknown key '{}'{}", key, sagemaker_ ? " in a SageMaker config" : ""),
                   unknownHint(map_path, key));
    }
    out[key] = values_->untyped(value);
    result_.config.marks[map_path + "." + key] = toMark(mark);
    if (map_spec && !map_spec->open_prefix.empty() && startsWith(key, map_spec->open_prefix)) return;
    warning(mark, fmt::format("'{}' is not a key of {} that Accelerate 1.15 reads: kept, and ignored", key, map_path),
            unknownHint(map_path, key));
  }

  std::string unknownHint(const std::string& map_path, const std::string& key) const {
    std::vector<std::string> known = childKeys(map_path, sagemaker_);
    if (map_path.empty()) {
      known.push_back("fp16");
      known.push_back("dynamo_backend");
    }
    if (auto guess = didYouMean(key, known)) return fmt::format("did you mean '{}'?", *guess);
    if (!map_path.empty()) return "known keys here: " + join(childKeys(map_path), ", ");
    return "remove it; `accel config show` lists every key accel knows";
  }

  void finish() {
    if (const auto& where = values_->overflow()) {
      error(*where,
            fmt::format("this value nests deeper than {} levels or, through YAML aliases, expands to more "
                        "values than the file has characters (an alias that contains itself, aliases of "
                        "aliases, or a long text repeated)",
                        ValueReader::kMaxDepth),
            "write the values out instead of referring to them with aliases (*name)");
    }
    RuleFindings rules = applyAccelerateRules(result_.config, legacy_);
    for (auto& d : rules.errors) {
      if (result_.errors.empty() || d.message != "distributed_type is required") result_.errors.push_back(std::move(d));
    }
    for (auto& d : rules.problems) result_.problems.push_back(std::move(d));
    for (auto& n : rules.notes) note(std::move(n));
    if (unlisted_notes_ > 0) result_.notes.push_back(fmt::format("and {} more such note(s)", unlisted_notes_));
    if (result_.errors.empty()) {
      for (auto& d : checkConsistency(result_.config)) {
        if (listing()) result_.problems.push_back(std::move(d));
      }
    }
    if (unlisted_ > 0) {
      (result_.errors.empty() ? result_.problems : result_.errors)
          .push_back({result_.config.path, fmt::format("and {} more problem(s) not listed", unlisted_),
                      "fix the ones above first; is this an Accelerate config file at all?"});
    }
  }
};

}  // namespace

LoadResult parseConfigText(const std::string& text, const std::string& path) { return Loader(path).run(text); }

LoadResult loadConfigFile(const std::string& path) {
  LoadResult result = parseConfigText(readConfigText(path), path);
  if (!result.errors.empty()) {  // every problem of the file in one run
    result.errors.insert(result.errors.end(), result.problems.begin(), result.problems.end());
    throw ConfigError(result.errors);
  }
  return result;
}

}  // namespace accel
