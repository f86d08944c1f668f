// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/terminal_settings.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

struct Given {
  std::string text, where, origin;  // "" text: not given
};

Given given(const std::optional<std::string>& flag, const char* flag_name, const char* variable, const LaunchFacts& f) {
  if (flag) return {*flag, fmt::format("--{} '{}'", flag_name, *flag), "command line"};
  auto it = f.env.find(variable);
  if (it == f.env.end() || it->second.empty()) return {};
  return {it->second, fmt::format("{}='{}'", variable, it->second), "environment"};
}

void resolvePty(LaunchSettings& s, const LaunchOptions& o, const LaunchFacts& f) {
  const Given g = given(o.pty, "pty", launch_env::kPty, f);
  if (g.text.empty()) return s.set("pty", "auto", "default");
  if (g.text != "auto" && g.text != "on" && g.text != "off") {
    throw UsageError(fmt::format("{} is not auto, on or off", g.where),
                     "auto gives workers a pseudo-terminal where you see their output on a terminal; off: pipes");
  }
  s.set("pty", g.text, g.origin);
}

void resolveStdinRank(LaunchSettings& s, const LaunchOptions& o, const LaunchFacts& f) {
  const Given g = given(o.stdin_rank, "stdin_rank", launch_env::kStdinRank, f);
  if (g.text.empty()) return s.set("stdin_rank", 0, "default");
  if (g.text == "none") return s.set("stdin_rank", -1, g.origin);
  const auto rank = parseInt(g.text);
  const long long world = s.integer("num_processes");
  if (!rank) throw UsageError(fmt::format("{} is not a rank (an integer) or none", g.where), "e.g. 0, 3 or none");
  if (*rank < 0 || *rank >= world) {
    throw UsageError(fmt::format("{} is out of range: the job has ranks 0 to {}", g.where, world - 1),
                     "give a rank of this job, or none");
  }
  s.set("stdin_rank", *rank, g.origin);
}

void resolveProgressInterval(LaunchSettings& s, const LaunchFacts& f) {
  auto it = f.env.find(launch_env::kProgressInterval);
  if (it == f.env.end() || it->second.empty()) return s.set("progress_interval", kDefaultProgressInterval, "default");
  const auto seconds = parsePositiveSeconds(it->second);
  if (!seconds) {
    throw UsageError(
        fmt::format("{}='{}' is not a number of seconds above 0", launch_env::kProgressInterval, it->second),
        "e.g. 10, or 0.5 for a denser log of progress bars");
  }
  s.set("progress_interval", *seconds, "environment");
}

}  // namespace

void resolveTerminal(LaunchSettings& s, const LaunchOptions& o, const LaunchFacts& f) {
  resolvePty(s, o, f);
  resolveStdinRank(s, o, f);
  resolveProgressInterval(s, f);
}

}  // namespace accel
