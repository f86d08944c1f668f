// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/slurm.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"

namespace accel::launch::settings {

namespace {

[[noreturn]] void badHostlist(const std::string& list, const std::string& why) {
  // The variable can be long: its start is enough to recognise it.
  const std::string shown = list.size() > 120 ? list.substr(0, 120) + "..." : list;
  throw UsageError(fmt::format("cannot read SLURM hostlist '{}': {}", shown, why), "pass --main_process_ip explicitly");
}

// Splits at commas that are not inside brackets.
std::vector<std::string> topLevelItems(const std::string& list) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) badHostlist(list, "unbalanced ']'");
    if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (depth != 0) badHostlist(list, "unbalanced '['");
  items.push_back(current);
  return items;
}

// SLURM's own hostlist code refuses a range of more than 64K hosts; accel refuses more hosts in
// the whole list, and names longer than DNS allows, so that a malformed variable is an error
// before any memory is spent on it (n[0-999999999] would be gigabytes of names).
constexpr size_t kMaxHosts = 65536;
constexpr size_t kMaxHostName = 255;

struct Range {
  long long lo = 0, hi = 0;
  size_t width = 0;  // "01-03": zero-padded to 2 digits
};

// A bound of a range: decimal digits only (no sign, no space), within long long.
bool parseBound(const std::string& text, long long& value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// "01-03,07" -> [1, 3] width 2, [7, 7] width 2.
std::vector<Range> parseRanges(const std::string& ranges, const std::string& list) {
  std::vector<Range> out;
  for (const auto& part : split(ranges, ',')) {
    auto dash = part.find('-');
    std::string lo = part.substr(0, dash), hi = dash == std::string::npos ? lo : part.substr(dash + 1);
    long long a = 0, b = 0;
    if (!parseBound(lo, a) || !parseBound(hi, b) || b < a || lo.size() > kMaxHostName) {
      badHostlist(list, "bad range '" + part + "' (expected N or N-M with N <= M, digits only)");
    }
    out.push_back({a, b, lo.size()});
  }
  return out;
}

// "7" at width 3 -> "007" (up to 65536 of these per list: no format-string parsing each time).
std::string padded(long long n, size_t width) {
  std::string digits = std::to_string(n);
  return digits.size() >= width ? digits : std::string(width - digits.size(), '0') + digits;
}

// Multiplies out the bracket groups of one item ("rack[1-2]-n[8-9]"), left to right. `total`
// becomes the item's host count, checked against `budget` before any host is built; only the
// first `limit` hosts are built (in order, so truncating each step keeps exactly those).
std::vector<std::string> expandItem(const std::string& item, const std::string& list, size_t budget, size_t limit,
                                    size_t& total) {
  std::vector<std::string> out = {""};
  total = 1;
  size_t pos = 0;
  const size_t build = std::max<size_t>(limit, 1);  // one at least: every name's length is checked
  auto tooLong = [&] { badHostlist(list, fmt::format("a host name longer than {} characters", kMaxHostName)); };
  while (true) {
    const size_t open = item.find('[', pos);
    const std::string literal = item.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    for (auto& host : out) host += literal;
    if (out.front().size() > kMaxHostName) tooLong();
    if (open == std::string::npos) {
      for (const auto& host : out) {
        if (host.size() > kMaxHostName) tooLong();
      }
      out.resize(std::min(out.size(), limit));
      return out;
    }
    const size_t close = item.find(']', open);
    if (close == std::string::npos) badHostlist(list, "unbalanced '['");
    const auto ranges = parseRanges(item.substr(open + 1, close - open - 1), list);
    size_t count = 0;  // values in this group; stops growing once over the budget
    for (const auto& r : ranges) {
      count += static_cast<size_t>(
          std::min<unsigned long long>(static_cast<unsigned long long>(r.hi - r.lo) + 1, budget + 1));
      if (count > budget / total) badHostlist(list, fmt::format("it expands to more than {} hosts", kMaxHosts));
    }
    total *= count;
    std::vector<std::string> next;
    next.reserve(std::min(out.size() * count, build));
    for (const auto& host : out) {
      for (const auto& r : ranges) {
        for (long long k = 0; k <= r.hi - r.lo && next.size() < build; ++k)
          next.push_back(host + padded(r.lo + k, r.width));
      }
    }
    out = std::move(next);
    pos = close + 1;
  }
}

// The first `limit` hosts of the list; the whole list is checked either way.
std::vector<std::string> expand(const std::string& hostlist, size_t limit) {
  std::vector<std::string> hosts;
  size_t total = 0;  // hosts in the list so far, built or not
  for (const auto& item : topLevelItems(trim(hostlist))) {
    if (item.empty()) continue;
    size_t in_item = 0;
    auto built = expandItem(item, hostlist, kMaxHosts - total, limit - hosts.size(), in_item);
    total += in_item;  // an item without brackets is one host, past the budget too
    if (total > kMaxHosts) badHostlist(hostlist, fmt::format("it expands to more than {} hosts", kMaxHosts));
    for (auto& h : built) hosts.push_back(std::move(h));
  }
  return hosts;
}

constexpr long long kMaxSlurmCount = 1 << 20;

std::optional<long long> number(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  // SLURM_GPUS_ON_NODE may look like "8" or "8(x2)"; the count comes first.
  std::string digits = it->second.substr(0, it->second.find_first_not_of("0123456789"));
  auto value = parseInt(digits);
  if (digits.empty()) throw UsageError(fmt::format("{}='{}' is not a number", name, it->second));
  // Node and GPU counts far past any cluster (or past long long) are damage; bounded, their
  // products cannot overflow.
  if (!value || *value > kMaxSlurmCount) {
    throw UsageError(fmt::format("{}='{}' is out of range (at most {})", name, it->second, kMaxSlurmCount),
                     "check the job's SLURM_* variables, or unset SLURM_JOB_ID to launch without SLURM");
  }
  return value;
}

}  // namespace

std::vector<std::string> expandHostlist(const std::string& hostlist) { return expand(hostlist, kMaxHosts); }

std::optional<SlurmInfo> detectSlurm(const std::map<std::string, std::string>& vars) {
  if (!env::kSlurmJobId.setIn(vars)) return std::nullopt;
  SlurmInfo s;
  s.job_id = env::kSlurmJobId.in(vars);
  s.node_rank = number(vars, env::kSlurmNodeId.name()).value_or(0);
  s.num_nodes =
      number(vars, env::kSlurmStepNumNodes.name()).value_or(number(vars, env::kSlurmNumNodes.name()).value_or(1));
  s.gpus_on_node = number(vars, env::kSlurmGpusOnNode.name());
  s.in_step = vars.count(env::kSlurmStepId.name()) > 0;
  for (const auto* row : {&env::kSlurmStepNodeList, &env::kSlurmJobNodeList, &env::kSlurmNodeList}) {
    const char* name = row->name();
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) continue;
    auto hosts = expand(it->second, 1);  // the first host is all a launch needs
    if (!hosts.empty()) s.first_host = hosts.front();
    break;
  }
  return s;
}

}  // namespace accel::launch::settings
