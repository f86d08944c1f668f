// SPDX-License-Identifier: Apache-2.0
// A launch's values of the config schema's keys (lib/config/schema.h): the keys `accel launch`
// reads (a flag, a launch default or a worker variable in their row), each typed as its row
// types it and with its origin. The launcher's own decisions (the paradigm, the placement, the
// supervision) are typed fields of LaunchSettings (launch_settings.h), not keys.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lib/launch/settings/origin.h"

namespace accel::launch::settings {

// A value and where it came from.
template <class T> struct Setting {
  T value{};
  Origin origin;
};

class KeyValues {
 public:
  const nlohmann::json& value(std::string_view key) const;  // null: unset
  const Origin& origin(std::string_view key) const;         // Default for an unset key
  long long integer(std::string_view key) const;            // 0 when unset or not a number
  std::string text(std::string_view key) const;             // a string as it is, else its JSON
  bool flag(std::string_view key) const;                    // true only for the value true
  bool has(std::string_view key) const;                     // set and not null
  void set(const std::string& key, nlohmann::json value, Origin origin);
  const std::map<std::string, Setting<nlohmann::json>, std::less<>>& all() const { return items_; }

 private:
  std::map<std::string, Setting<nlohmann::json>, std::less<>> items_;
};

}  // namespace accel::launch::settings
