// SPDX-License-Identifier: Apache-2.0
#include "lib/config/writer.h"

#include <cmath>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lib/common/atomic_file.h"
#include "lib/common/random_bytes.h"
#include "lib/config/config.h"
#include "lib/config/yaml_quoting.h"
#include "lib/config/yaml_scalar.h"

namespace accel {

namespace {

using nlohmann::json;

bool droppedAtTopLevel(const json& v) { return v.is_null() || (v.is_object() && v.empty()); }

// `column` is where the value starts on its line and `indent` where folded lines continue.
std::string scalar(const json& v, int column = -1, int indent = 0) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer: return std::to_string(v.get<long long>());
    case json::value_t::number_unsigned: return std::to_string(v.get<unsigned long long>());
    case json::value_t::number_float: return formatYamlFloat(v.get<double>());
    case json::value_t::string: return formatYamlString(v.get_ref<const std::string&>(), column, indent);
    case json::value_t::object: return "{}";
    case json::value_t::array: return "[]";
    default: return "null";
  }
}

bool isBlockCollection(const json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void emitMap(std::string& out, const json& map, size_t indent, bool top_level);

// Emits a sequence the way PyYAML does inside a mapping: items flush with the parent key.
void emitSequence(std::string& out, const json& list, size_t indent) {
  for (const auto& item : list) {
    out += std::string(indent, ' ') + "-";
    if (item.is_object() && !item.empty()) {
      std::string nested;
      emitMap(nested, item, indent + 2, false);
      out += " " + nested.substr(indent + 2);  // first key shares the dash's line
    } else if (item.is_array() && !item.empty()) {
      std::string nested;
      emitSequence(nested, item, indent + 2);
      out += " " + nested.substr(indent + 2);
    } else {
      const int at = static_cast<int>(indent) + 2;
      out += " " + scalar(item, at, at) + "\n";
    }
  }
}

void emitMap(std::string& out, const json& map, size_t indent, bool top_level) {
  for (const auto& [key, value] : map.items()) {  // nlohmann objects iterate in sorted order
    if (top_level && droppedAtTopLevel(value)) continue;
    const std::string key_text = formatYamlString(key);
    out += std::string(indent, ' ') + key_text + ":";
    if (!isBlockCollection(value)) {
      const int column = static_cast<int>(indent + key_text.size()) + 2;
      out += " " + scalar(value, column, static_cast<int>(indent) + 2) + "\n";
    } else if (value.is_object()) {
      out += "\n";
      emitMap(out, value, indent + 2, false);
    } else {
      out += "\n";
      emitSequence(out, value, indent);
    }
  }
}

json withoutDropped(const json& values) {
  json kept = json::object();
  for (const auto& [key, value] : values.items()) {
    if (!droppedAtTopLevel(value)) kept[key] = value;
  }
  return kept;
}

}  // namespace

std::string toYaml(const json& values) {
  std::string out;
  emitMap(out, values, 0, true);
  return out.empty() ? "{}\n" : out;
}

std::string dumpYaml(const json& values) {
  std::string out;
  emitMap(out, values, 0, false);
  return out.empty() ? "{}\n" : out;
}

namespace {

// nlohmann writes a non-finite float as null; Python's json.dumps as a word. Marked here as a
// string no value holds (U+0001 and a random nonce: never in a value of this file), then
// unquoted in the text.
json markNonFinite(const json& v, const std::string& mark) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    return mark + (std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
  }
  if (!v.is_structured()) return v;
  json out = v.is_object() ? json::object() : json::array();
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (v.is_object()) {
      out[it.key()] = markNonFinite(it.value(), mark);
    } else {
      out.push_back(markNonFinite(*it, mark));
    }
  }
  return out;
}

void unquoteWords(std::string& text, const std::string& nonce) {
  for (const char* word : {"NaN", "Infinity", "-Infinity"}) {
    const std::string marked = "\"\\u0001" + nonce + word + "\"";
    for (size_t at; (at = text.find(marked)) != std::string::npos;) text.replace(at, marked.size(), word);
  }
}

}  // namespace

std::string toJson(const json& values) {
  // Text that is not UTF-8 (a value typed into the wizard, say) becomes U+FFFD instead of a
  // type_error out of dump(): the writer never throws.
  const std::string nonce = fmt::format("{:016x}", randomU64());
  std::string text = markNonFinite(withoutDropped(values), "\x01" + nonce)
                         .dump(2, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace) +
                     "\n";
  unquoteWords(text, nonce);
  return text;
}

std::string serializeConfig(const json& values, const std::string& path) {
  return isJsonPath(path) ? toJson(values) : toYaml(values);
}

void saveConfig(const json& values, const std::string& path, bool create_parents) {
  writeFileAtomic(path, serializeConfig(values, path), create_parents);
}

}  // namespace accel
