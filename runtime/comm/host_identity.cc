// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/host_identity.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

namespace {

std::string namespaceInode(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? std::to_string(st.st_ino) : "?";
}

}  // namespace

std::string hostIdentity() {
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

HostLayout layoutOf(const std::vector<std::string>& ids) {
  HostLayout layout;
  std::map<std::string, int> index;
  for (const auto& id : ids) {
    auto [it, added] = index.emplace(id, static_cast<int>(layout.hosts.size()));
    if (added) layout.hosts.emplace_back();
    layout.hosts[static_cast<size_t>(it->second)].push_back(static_cast<int>(layout.host_of.size()));
    layout.host_of.push_back(it->second);
  }
  return layout;
}

HostLayout exchangeHostIds(Store& store, int rank, int size, const std::string& id) {
  store.set(fmt::format("host/{}", rank), toBytes(id));
  std::vector<std::string> ids;
  for (int r = 0; r < size; ++r) ids.push_back(r == rank ? id : toString(store.get(fmt::format("host/{}", r))));
  return layoutOf(ids);
}

}  // namespace accel
