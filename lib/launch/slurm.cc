// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/slurm.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

[[noreturn]] void badHostlist(const std::string& list, const std::string& why) {
  throw UsageError(fmt::format("cannot read SLURM hostlist '{}': {}", list, why),
                   "pass --main_process_ip explicitly");
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

// "01-03,07" -> 01 02 03 07, keeping the width of zero-padded bounds.
std::vector<std::string> expandRanges(const std::string& ranges, const std::string& list) {
  std::vector<std::string> out;
  for (const auto& part : split(ranges, ',')) {
    auto dash = part.find('-');
    std::string lo = part.substr(0, dash), hi = dash == std::string::npos ? lo : part.substr(dash + 1);
    auto a = parseInt(lo), b = parseInt(hi);
    if (!a || !b || *a < 0 || *b < *a || *b - *a > 100000) badHostlist(list, "bad range '" + part + "'");
    for (long long n = *a; n <= *b; ++n) out.push_back(fmt::format("{:0{}}", n, lo.size()));
  }
  return out;
}

std::vector<std::string> expandItem(const std::string& item, const std::string& list) {
  auto open = item.find('[');
  if (open == std::string::npos) return {item};
  auto close = item.find(']', open);
  std::vector<std::string> out;
  for (const auto& n : expandRanges(item.substr(open + 1, close - open - 1), list)) {
    for (auto& rest : expandItem(item.substr(close + 1), list)) {
      out.push_back(item.substr(0, open) + n + rest);
    }
  }
  return out;
}

std::optional<long long> number(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  // SLURM_GPUS_ON_NODE may look like "8" or "8(x2)"; the count comes first.
  std::string digits = it->second.substr(0, it->second.find_first_not_of("0123456789"));
  auto value = parseInt(digits);
  if (!value) throw UsageError(fmt::format("{}='{}' is not a number", name, it->second));
  return value;
}

}  // namespace

std::vector<std::string> expandHostlist(const std::string& hostlist) {
  std::vector<std::string> hosts;
  for (const auto& item : topLevelItems(trim(hostlist))) {
    if (item.empty()) continue;
    for (auto& h : expandItem(item, hostlist)) hosts.push_back(std::move(h));
  }
  return hosts;
}

std::optional<SlurmInfo> detectSlurm(const std::map<std::string, std::string>& env) {
  auto job = env.find("SLURM_JOB_ID");
  if (job == env.end() || job->second.empty()) return std::nullopt;
  SlurmInfo s;
  s.job_id = job->second;
  s.node_rank = number(env, "SLURM_NODEID").value_or(0);
  s.num_nodes = number(env, "SLURM_STEP_NUM_NODES").value_or(number(env, "SLURM_NNODES").value_or(1));
  s.gpus_on_node = number(env, "SLURM_GPUS_ON_NODE");
  s.in_step = env.count("SLURM_STEP_ID") > 0;
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) continue;
    auto hosts = expandHostlist(it->second);
    if (!hosts.empty()) s.first_host = hosts.front();
    break;
  }
  return s;
}

}  // namespace accel
