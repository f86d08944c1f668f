// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/terminal_settings.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"

namespace accel::launch::settings {

namespace {

struct Given {
  std::string text, where;  // "" text: not given
  Origin origin;
};

Given given(const std::optional<std::string>& flag, const char* flag_name, const env::Variable<std::string>& variable,
            const facts::Machine& f) {
  if (flag) return {*flag, fmt::format("--{} '{}'", flag_name, *flag), fromCommandLine()};
  const std::string value = variable.in(f.env);
  if (value.empty()) return {};
  return {value, fmt::format("{}='{}'", variable.name(), value), fromEnvironment()};
}

Setting<Pty> resolvePty(const LaunchOptions& o, const facts::Machine& f) {
  const Given g = given(o.pty, "pty", env::kPty, f);
  if (g.text.empty()) return {Pty::Auto, fromDefault()};
  if (g.text == "auto") return {Pty::Auto, g.origin};
  if (g.text == "on") return {Pty::On, g.origin};
  if (g.text == "off") return {Pty::Off, g.origin};
  throw UsageError(fmt::format("{} is not auto, on or off", g.where),
                   "auto gives workers a pseudo-terminal where you see their output on a terminal; off: pipes");
}

Setting<int> resolveStdinRank(long long world, const LaunchOptions& o, const facts::Machine& f) {
  const Given g = given(o.stdin_rank, "stdin_rank", env::kStdinRank, f);
  if (g.text.empty()) return {0, fromDefault()};
  if (g.text == "none") return {-1, g.origin};
  const auto rank = parseInt(g.text);
  if (!rank) throw UsageError(fmt::format("{} is not a rank (an integer) or none", g.where), "e.g. 0, 3 or none");
  if (*rank < 0 || *rank >= world) {
    throw UsageError(fmt::format("{} is out of range: the job has ranks 0 to {}", g.where, world - 1),
                     "give a rank of this job, or none");
  }
  return {static_cast<int>(*rank), g.origin};
}

Setting<double> resolveProgressInterval(const facts::Machine& f) {
  if (!env::kProgressInterval.setIn(f.env)) return {env::kProgressInterval.fallback(), fromDefault()};
  return {env::kProgressInterval.in(f.env), fromEnvironment()};
}

}  // namespace

void resolveTerminal(Output& out, long long world, const LaunchOptions& o, const facts::Machine& f) {
  out.pty = resolvePty(o, f);
  out.stdin_rank = resolveStdinRank(world, o, f);
  out.progress_interval = resolveProgressInterval(f);
}

}  // namespace accel::launch::settings
