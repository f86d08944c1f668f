// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/line_prefix.h"

#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::settings {

namespace {

constexpr const char* kFlag = "--log_line_prefix_template";

bool nameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool nameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

[[noreturn]] void refuse(std::string_view where, std::string_view tmpl, std::string_view what) {
  throw UsageError(fmt::format("{} '{}': {}", where.empty() ? kFlag : where, tmpl, what),
                   "the template's names are ${role_name}, ${rank}, ${local_rank} and ${hostname}, as torchrun's; "
                   "write $$ for a $ of its own");
}

std::optional<std::string> valueOf(std::string_view name, const LinePrefixValues& v) {
  if (name == "role_name") return v.role_name;
  if (name == "rank") return std::to_string(v.rank);
  if (name == "local_rank") return std::to_string(v.local_rank);
  if (name == "hostname") return v.hostname;
  return std::nullopt;
}

// A name the template refers to, and how many characters the reference takes.
struct Reference {
  std::string_view name;
  size_t length;
};

// The reference the `$` at `at` starts ($name or ${name}), or nullopt for a `$` before anything
// else, which string.Template keeps as it stands.
std::optional<Reference> referenceAt(std::string_view tmpl, size_t at, std::string_view where) {
  if (at + 1 < tmpl.size() && tmpl[at + 1] == '{') {
    const size_t close = tmpl.find('}', at + 2);
    if (close == std::string_view::npos) refuse(where, tmpl, fmt::format("'{}' has no closing }}", tmpl.substr(at)));
    return Reference{tmpl.substr(at + 2, close - at - 2), close - at + 1};
  }
  if (at + 1 >= tmpl.size() || !nameStart(tmpl[at + 1])) return std::nullopt;
  size_t end = at + 1;
  while (end < tmpl.size() && nameChar(tmpl[end])) ++end;
  return Reference{tmpl.substr(at + 1, end - at - 1), end - at};
}

}  // namespace

std::string expandLinePrefix(std::string_view tmpl, const LinePrefixValues& v, std::string_view where) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl.substr(i, 2) == "$$") {  // string.Template's escape
      out += '$';
      ++i;
      continue;
    }
    const std::optional<Reference> ref = tmpl[i] == '$' ? referenceAt(tmpl, i, where) : std::nullopt;
    if (!ref) {
      out += tmpl[i];
      continue;
    }
    const std::optional<std::string> value = valueOf(ref->name, v);
    if (!value) refuse(where, tmpl, fmt::format("unknown name ${{{}}}", ref->name));
    out += *value;
    i += ref->length - 1;
  }
  return out;
}

Setting<std::optional<std::string>> resolveLinePrefixTemplate(const LaunchOptions& o, const facts::Machine& facts) {
  std::string tmpl = o.log_line_prefix_template.value_or("");
  std::string where = kFlag;
  Origin origin = fromCommandLine();
  if (tmpl.empty()) {
    tmpl = env::kLogLinePrefixTemplate.in(facts.env);
    if (tmpl.empty()) return {std::nullopt, fromDefault()};
    where = env::kLogLinePrefixTemplate.name();
    origin = fromEnvironment();
  }
  expandLinePrefix(tmpl, {}, where);  // refused now, not when the first worker starts
  return {tmpl, origin};
}

}  // namespace accel::launch::settings
