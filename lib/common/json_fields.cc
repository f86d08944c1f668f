// SPDX-License-Identifier: Apache-2.0
#include "lib/common/json_fields.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace accel {

using nlohmann::json;

JsonFields::JsonFields(const json& object, std::string where, size_t max_text)
    : j_(object), where_(std::move(where)), max_text_(max_text) {}

long long JsonFields::integer(const char* key, long long lo, long long hi) {
  const json& v = need(key);
  if (!v.is_number_integer()) bad(key, fmt::format("{} is not an integer", v.type_name()));
  const long long n = v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi)
                          ? hi + 1
                          : v.get<long long>();
  if (n < lo || n > hi) bad(key, fmt::format("{} is not in {}..{}", v.dump(), lo, hi));
  return n;
}

int JsonFields::small(const char* key, long long lo, long long hi) {
  return static_cast<int>(integer(key, lo, std::min<long long>(hi, std::numeric_limits<int>::max())));
}

double JsonFields::seconds(const char* key) {
  const json& v = need(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) bad(key, "not a number of seconds");
  return v.get<double>();
}

bool JsonFields::flag(const char* key) {
  const json& v = need(key);
  if (!v.is_boolean()) bad(key, fmt::format("{} is not true or false", v.type_name()));
  return v.get<bool>();
}

std::string JsonFields::text(const char* key) { return text(key, max_text_); }

std::string JsonFields::text(const char* key, size_t max) {
  const json& v = need(key);
  if (!v.is_string()) bad(key, fmt::format("{} is not a string", v.type_name()));
  if (v.get_ref<const std::string&>().size() > max) bad(key, fmt::format("longer than {} bytes", max));
  return v.get<std::string>();
}

std::vector<std::string> JsonFields::lines(const char* key, size_t max_lines, size_t max_line) {
  const json& v = need(key);
  if (!v.is_array() || v.size() > max_lines) bad(key, fmt::format("not a list of at most {} lines", max_lines));
  std::vector<std::string> out;
  for (const auto& line : v) {
    if (!line.is_string() || line.get_ref<const std::string&>().size() > max_line) {
      bad(key, fmt::format("an entry is not a string of at most {} bytes", max_line));
    }
    out.push_back(line.get<std::string>());
  }
  return out;
}

std::vector<long long> JsonFields::integers(const char* key, size_t max_count, long long lo, long long hi) {
  const json& v = need(key);
  if (!v.is_array() || v.size() > max_count) bad(key, fmt::format("not a list of at most {} integers", max_count));
  std::vector<long long> out;
  out.reserve(v.size());
  for (const auto& n : v) {
    if (!n.is_number_integer() || n.get<long long>() < lo || n.get<long long>() > hi ||
        (n.is_number_unsigned() && n.get<unsigned long long>() > static_cast<unsigned long long>(hi))) {
      bad(key, fmt::format("an entry is not an integer in {}..{}", lo, hi));
    }
    out.push_back(n.get<long long>());
  }
  return out;
}

const json& JsonFields::object(const char* key, bool nullable) {
  const json& v = need(key);
  if (!v.is_object() && !(nullable && v.is_null())) bad(key, fmt::format("{} is not an object", v.type_name()));
  return v;
}

size_t JsonFields::choice(const char* key, const std::vector<const char*>& names) {
  const json& v = need(key);
  if (v.is_string()) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (v.get_ref<const std::string&>() == names[i]) return i;
    }
  }
  bad(key, fmt::format("{} is not one of {}", v.dump(), fmt::join(names, ", ")));
}

void JsonFields::done() const {
  for (const auto& [key, value] : j_.items()) {
    if (key != "t" && !read_.contains(key)) throw FieldError(fmt::format("{}unknown field '{}'", where_, key));
  }
}

const json& JsonFields::need(const char* key) {
  auto it = j_.find(key);
  if (it == j_.end()) throw FieldError(fmt::format("{}field '{}' is missing", where_, key));
  read_[key] = true;
  return *it;
}

void JsonFields::bad(const char* key, const std::string& why) const {
  throw FieldError(fmt::format("{}field '{}': {}", where_, key, why));
}

json parseObject(const std::string& text, const std::string& where) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw FieldError(where + "not a JSON object");
  return j;
}

}  // namespace accel
