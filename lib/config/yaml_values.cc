// SPDX-License-Identifier: Apache-2.0
#include "lib/config/yaml_values.h"

#include <cmath>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/common/utf8.h"
#include "lib/config/readable_text.h"
#include "lib/config/yaml_scalar.h"

namespace accel {

namespace {

using nlohmann::json;

bool isQuoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

// A JSON number or word the way Python's json.load reads it; else PyYAML's plain-scalar typing.
ResolvedScalar resolve(const std::string& text, bool json_file) {
  ResolvedScalar r = resolvePlainScalar(text);
  if (!json_file || r.kind != ScalarKind::String) return r;
  if (text == "NaN" || text == "Infinity" || text == "-Infinity") {
    r.kind = ScalarKind::Float;
    r.real = text == "NaN" ? std::nan("") : text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  } else if (isJsonNumber(text)) {
    r.kind = ScalarKind::Float;                   // "1e-05": what Python's json.dumps writes for small floats
    r.real = std::strtod(text.c_str(), nullptr);  // like Python's float(): 1e999 is inf, not an error
  }
  return r;
}

std::string intHint(const std::string& text) {
  auto real = parseDouble(text);
  // Only a whole number within long long's range has an integer spelling (casting a larger
  // double to long long is undefined behaviour).
  if (real && std::fabs(*real) < 9.2e18 && *real == std::trunc(*real)) {
    return fmt::format("write it as a plain integer: {}", static_cast<long long>(*real));
  }
  return {};
}

}  // namespace

std::string scalarOf(const YAML::Node& node) { return repairYamlCppEscapes(node.Scalar()); }

std::string kindOf(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  constexpr size_t kShown = 60;  // a message shows the value, not a page of it
  const std::string& text = node.Scalar();
  if (text.size() <= kShown) return "'" + scalarOf(node) + "'";
  return "'" + std::string(utf8Prefix(repairYamlCppEscapes(text.substr(0, kShown + 4)), kShown)) + "...' (" +
         std::to_string(text.size()) + " bytes)";
}

bool ValueReader::charge(const YAML::Node& node) {
  if (overflow_) return false;
  const size_t cost = 1 + (node.IsScalar() ? node.Scalar().size() : 0);
  if (cost > left_) {
    overflow_ = node.Mark();
    return false;
  }
  left_ -= cost;
  return true;
}

json ValueReader::untyped(const YAML::Node& node, int depth) {
  if (node.IsNull() || overflow_) return json();
  if (depth > kMaxDepth) {
    overflow_ = node.Mark();
    return json();
  }
  if (!charge(node)) return json();
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
  ResolvedScalar r = resolve(scalarOf(node), json_);
  switch (r.kind) {
    case ScalarKind::Null: return json();
    case ScalarKind::Bool: return r.boolean;
    case ScalarKind::Int: return r.integer;
    case ScalarKind::Float: return r.real;
    default: return scalarOf(node);
  }
}

ValueReader::Typed ValueReader::typed(const KeySpec& spec, const YAML::Node& node, const std::string& dotted,
                                      bool sagemaker) {
  auto wrong = [&](std::string hint = {}) {
    return Typed{std::nullopt,
                 fmt::format("{} must be {}, got {}", dotted, describeType(spec, sagemaker), kindOf(node)),
                 std::move(hint),
                 {}};
  };
  if (node.IsNull() || (spec.type != ValueType::Any && !charge(node))) return {json(), {}, {}, {}};
  switch (spec.type) {
    case ValueType::Any: return {untyped(node), {}, {}, {}};
    case ValueType::Map: return node.IsMap() ? Typed{json::object(), {}, {}, {}} : wrong();
    case ValueType::List:
      if (node.IsSequence()) return {untyped(node), {}, {}, {}};
      if (node.IsScalar() && booleanTuple(scalarOf(node))) return {scalarOf(node), {}, {}, {}};
      return wrong();
    default: return node.IsScalar() ? scalar(spec, node, dotted, sagemaker) : wrong();
  }
}

ValueReader::Typed ValueReader::scalar(const KeySpec& spec, const YAML::Node& node, const std::string& dotted,
                                       bool sagemaker) {
  const std::string text = scalarOf(node);
  const bool quoted = isQuoted(node);
  const ResolvedScalar r = quoted ? ResolvedScalar{} : resolve(text, json_);
  auto wrong = [&](std::string hint = {}) {
    return Typed{std::nullopt,
                 fmt::format("{} must be {}, got {}", dotted, describeType(spec, sagemaker), kindOf(node)),
                 std::move(hint),
                 {}};
  };
  switch (spec.type) {
    case ValueType::Bool:
      if (r.kind == ScalarKind::Bool) return {json(r.boolean), {}, {}, {}};
      if (quoted && resolvePlainScalar(text).kind == ScalarKind::Bool) {
        return wrong("remove the quotes: Accelerate reads any quoted text as true");
      }
      return wrong();
    case ValueType::Int:
      if (r.kind != ScalarKind::Int && !quoted && isIntegerText(text)) {  // digits past long long
        return {std::nullopt, fmt::format("{}: {}", dotted, whyNotInteger(text, spec.min, spec.max)), {}, {}};
      }
      if (r.kind != ScalarKind::Int) return wrong(intHint(text));
      return range(spec, dotted, r.integer);
    case ValueType::Float:
      if (r.kind == ScalarKind::Int) return {json(r.integer), {}, {}, {}};
      if (r.kind == ScalarKind::Float) return {json(r.real), {}, {}, {}};
      return wrong();
    case ValueType::Enum:
      // A plain NO is a YAML boolean to PyYAML; SageMakerConfig converts only text to its enum,
      // so Accelerate keeps `distributed_type: NO` unquoted as False (and loads the file).
      if (sagemaker && dotted == "distributed_type" && r.kind == ScalarKind::Bool) return {json(r.boolean), {}, {}, {}};
      return choice(spec, dotted, text, sagemaker);
    case ValueType::Scalar: {
      json value = untyped(node);
      if (value.is_string() && !spec.choices.empty()) return choice(spec, dotted, text, sagemaker);
      return {value, {}, {}, {}};
    }
    case ValueType::String:
      if (r.kind == ScalarKind::Null) return {json(), {}, {}, {}};
      return {json(text), {}, {}, {}};  // `gpu_ids: 1`, `main_process_ip: 10.0.0.1`: the text is meant
    default: return wrong();
  }
}

ValueReader::Typed ValueReader::range(const KeySpec& spec, const std::string& dotted, long long value) {
  // Accelerate's `config update` writes num_processes: -1 for "decide at launch".
  if (dotted == "num_processes" && value == -1) {
    return {json(), {}, {}, "num_processes: -1 (unset) dropped; launch decides the count"};
  }
  if (value < spec.min || value > spec.max) {
    return {std::nullopt, fmt::format("{} is {}, but it must be {}", dotted, value, describeType(spec)), {}, {}};
  }
  return {json(value), {}, {}, {}};
}

ValueReader::Typed ValueReader::choice(const KeySpec& spec, const std::string& dotted, const std::string& text,
                                       bool sagemaker) {
  const auto& listed = choicesOf(spec, sagemaker);
  for (auto c : listed) {
    if (c == text || (spec.fold_case && toUpper(c) == toUpper(text))) return {json(std::string(c)), {}, {}, {}};
  }
  std::vector<std::string> choices(listed.begin(), listed.end());
  std::string hint = "allowed values: " + join(choices, ", ");
  if (auto guess = didYouMean(text, choices)) hint = fmt::format("did you mean '{}'? ", *guess) + hint;
  return {std::nullopt, fmt::format("'{}' is not a valid value for {}", text, dotted), hint, {}};
}

}  // namespace accel
