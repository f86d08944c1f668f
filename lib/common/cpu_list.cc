// SPDX-License-Identifier: Apache-2.0
#include "lib/common/cpu_list.h"

#include <set>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

std::optional<std::vector<int>> parseCpuList(std::string_view text) {
  std::set<int> cpus;
  for (const auto& raw : split(std::string(text), ',')) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    const auto dash = item.find('-');
    auto first = parseInt(item.substr(0, dash));
    auto last = dash == std::string::npos ? first : parseInt(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last > 1 << 20) return std::nullopt;
    for (long long c = *first; c <= *last; ++c) cpus.insert(static_cast<int>(c));
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string cpuListText(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace accel
