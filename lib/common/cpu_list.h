// SPDX-License-Identifier: Apache-2.0
// The kernel's CPU list text ("0-3,8,10-11": sysfs' cpulist files, /proc's Cpus_allowed_list,
// torch's and numactl's CPU sets), read and written. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

// `text` ("0-3,8,10-11\n"; spaces and empty items allowed) ascending and without repeats;
// nullopt for anything else (a stride, a reversed range, a word).
std::optional<std::vector<int>> parseCpuList(std::string_view text);

// Ascending `cpus` as the kernel writes them: runs as "a-b", others alone, joined by ','.
std::string cpuListText(const std::vector<int>& cpus);

}  // namespace accel
