// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/host_identity.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

std::string namespaceInode(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? std::to_string(st.st_ino) : "?";
}

}  // namespace

std::string hostIdentity() {
  if (const char* id = std::getenv(launch_env::kAccelHostId); id && *id) return id;
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot);
  return fmt::format("{}/net:{}/pid:{}", boot, namespaceInode("/proc/self/ns/net"),
                     namespaceInode("/proc/self/ns/pid"));
}

int HostLayout::localIndex(int rank) const {
  const auto& mine = hosts[static_cast<size_t>(host_of[static_cast<size_t>(rank)])];
  return static_cast<int>(std::find(mine.begin(), mine.end(), rank) - mine.begin());
}

bool HostLayout::spreadOut() const { return hosts.size() == host_of.size(); }

std::string HostLayout::describe() const {
  std::vector<std::string> parts;
  for (const auto& h : hosts) {
    std::vector<std::string> ranks;
    for (int r : h) ranks.push_back(std::to_string(r));
    parts.push_back(join(ranks, ","));
  }
  return fmt::format("{} host{}: ranks {}", hosts.size(), hosts.size() == 1 ? "" : "s", join(parts, " | "));
}

HostLayout exchangeHostIds(Store& store, int rank, int size, const std::string& id) {
  store.set(fmt::format("host/{}", rank), toBytes(id));
  HostLayout layout;
  std::map<std::string, int> index;
  for (int r = 0; r < size; ++r) {
    const std::string theirs = r == rank ? id : toString(store.get(fmt::format("host/{}", r)));
    auto [it, added] = index.emplace(theirs, static_cast<int>(layout.hosts.size()));
    if (added) layout.hosts.emplace_back();
    layout.hosts[static_cast<size_t>(it->second)].push_back(r);
    layout.host_of.push_back(it->second);
  }
  return layout;
}

}  // namespace accel
