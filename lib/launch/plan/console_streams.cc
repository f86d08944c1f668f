// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/console_streams.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel::launch::plan {

namespace {

// torchrun's Std.from_str: one value for every local rank, or some local ranks' own.
struct Streams {
  int all = 0;
  std::map<int, int> by_rank;
  int of(int rank) const {  // -1: a rank with no value of its own
    auto it = by_rank.find(rank);
    return it == by_rank.end() ? all : it->second;
  }
};

[[noreturn]] void badStreams(const std::string& flag, const std::string& text) {
  throw UsageError(fmt::format("{} '{}' is not 0-3 or LOCAL_RANK:0-3,…", flag, text),
                   "1 = stdout, 2 = stderr, 3 = both, 0 = neither");
}

Streams parseStreams(const std::string& flag, const std::string& text, int fallback) {
  auto stream = [&](const std::string& item) {
    auto v = parseInt(trim(item));
    if (!v || *v < 0 || *v > 3) badStreams(flag, text);
    return static_cast<int>(*v);
  };
  Streams out{fallback, {}};
  if (text.find(':') == std::string::npos) return out.all = stream(text), out;
  for (const auto& item : split(text, ',')) {
    const auto colon = item.find(':');
    auto rank = colon == std::string::npos ? std::nullopt : parseInt(trim(item.substr(0, colon)));
    if (!rank || *rank < 0) badStreams(flag, text);
    out.by_rank[static_cast<int>(*rank)] = stream(item.substr(colon + 1));
  }
  return out;
}

// The flag or variable a setting came from, for messages ("--tee", "PET_TEE").
std::string given(const settings::Origin& origin, const std::string& flag) {
  return origin.source == settings::Source::Torchrun ? origin.text() : "--" + flag;
}

}  // namespace

void setConsoleStreams(LaunchPlan& p, const settings::LaunchSettings& s) {
  const bool torchrun = s.torchrun.grammar.value;
  const settings::Output& o = s.output;
  // torchrun's --tee defaults to 0 and adds to what -r leaves on the console; accel launch's
  // --tee is the console itself (default 3), from which -r takes away.
  const std::string tee = torchrun && o.tee.origin.source == settings::Source::Default ? "0" : o.tee.value;
  const Streams teed = parseStreams(given(o.tee.origin, "tee"), tee, 3);
  const Streams redirected =
      o.redirects.value ? parseStreams(given(o.redirects.origin, "redirects"), *o.redirects.value, 0) : Streams{};
  auto console = [&](int rank) {
    return torchrun ? (3 & ~redirected.of(rank)) | teed.of(rank) : teed.of(rank) & ~redirected.of(rank);
  };
  p.console_streams = console(-1);
  for (const auto* by_rank : {&teed.by_rank, &redirected.by_rank}) {
    for (const auto& [rank, streams] : *by_rank) p.console_streams_by_rank[rank] = console(rank);
  }
  if (!o.local_ranks_filter.value) return;
  const std::string& filter = *o.local_ranks_filter.value;
  for (const auto& item : split(filter, ',')) {
    auto rank = parseInt(trim(item));
    if (!rank || *rank < 0) {
      throw UsageError(fmt::format("{} '{}' is not a comma-separated list of local ranks",
                                   given(o.local_ranks_filter.origin, "local_ranks_filter"), filter));
    }
    p.console_ranks.insert(static_cast<int>(*rank));
  }
}

}  // namespace accel::launch::plan
