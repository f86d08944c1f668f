// SPDX-License-Identifier: Apache-2.0
#include "lib/common/variables.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel::env {

Lookup processLookup() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
}

std::string text(const char*, const std::string& t) { return t; }

double positiveSeconds(const char* name, const std::string& t) {
  if (const auto v = parsePositiveSeconds(t)) return *v;
  throw UsageError(fmt::format("{}='{}' is not a number of seconds above 0", name, t),
                   "e.g. 30 or 2.5, or unset it for the default");
}

double secondsOrOff(const char* name, const std::string& t) {
  const auto v = parseDouble(t);
  if (v && std::isfinite(*v) && *v >= 0) return *v;
  throw UsageError(fmt::format("{}='{}' is not a number of seconds (0 for off)", name, t), "e.g. 300 or 0");
}

double signedSeconds(const char* name, const std::string& t) {
  const auto v = parseDouble(t);
  if (v && std::isfinite(*v) && std::abs(*v) <= 1e6) return *v;
  throw UsageError(fmt::format("{}='{}' is not a number of seconds (negative ones too)", name, t), "e.g. 2.5 or -1");
}

int port(const char* name, const std::string& t) {
  const auto v = parseInt(t);
  if (v && *v >= 1 && *v <= 65535) return static_cast<int>(*v);
  throw UsageError(fmt::format("{}='{}' is not a port (1-65535)", name, t));
}

int entries(const char* name, const std::string& t) {
  const auto v = parseInt(t);
  if (v && *v >= 0 && *v <= kMaxEntries) return static_cast<int>(*v);
  throw UsageError(fmt::format("{}='{}' is not a number of entries from 0 to {}", name, t, kMaxEntries),
                   "e.g. 2000, or 0 for none");
}

}  // namespace accel::env
