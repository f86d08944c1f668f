// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/key_values.h"

namespace accel::launch::settings {

using nlohmann::json;

const json& KeyValues::value(std::string_view key) const {
  static const json null;
  auto it = items_.find(key);
  return it == items_.end() ? null : it->second.value;
}

const Origin& KeyValues::origin(std::string_view key) const {
  static const Origin none;
  auto it = items_.find(key);
  return it == items_.end() ? none : it->second.origin;
}

long long KeyValues::integer(std::string_view key) const {
  const json& v = value(key);
  return v.is_number() ? v.get<long long>() : 0;
}

std::string KeyValues::text(std::string_view key) const {
  const json& v = value(key);
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

bool KeyValues::flag(std::string_view key) const { return value(key) == true; }

bool KeyValues::has(std::string_view key) const { return !value(key).is_null(); }

void KeyValues::set(const std::string& key, json v, Origin origin) {
  items_.insert_or_assign(key, Setting<json>{std::move(v), std::move(origin)});
}

}  // namespace accel::launch::settings
