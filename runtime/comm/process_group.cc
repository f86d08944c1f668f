// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/process_group.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "runtime/comm/flight_recorder.h"

namespace accel {

ProcessGroup::ProcessGroup(Store& store, const std::string& prefix, int rank, int size, BackendFactory factory,
                           std::vector<int> world_ranks)
    : base_(store),
      prefix_(prefix),
      store_(prefix, store),
      rank_(rank),
      size_(size),
      factory_(std::move(factory)),
      world_ranks_(std::move(world_ranks)) {
  if (world_ranks_.empty()) {
    world_ranks_.resize(static_cast<size_t>(size));
    std::iota(world_ranks_.begin(), world_ranks_.end(), 0);
  }
  backend_ = factory_(store_, rank, size, world_ranks_);
}

std::unique_ptr<ProcessGroup> ProcessGroup::newGroup(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  if (ranks.empty() || std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end() || ranks.front() < 0 ||
      ranks.back() >= size_) {
    throw CommError(fmt::format("new_group: ranks must be distinct and from 0 to {}", size_ - 1));
  }
  const std::string prefix = fmt::format("{}/group{}", prefix_, groups_made_++);
  auto me = std::find(ranks.begin(), ranks.end(), rank_);
  if (me == ranks.end()) {
    flightSkipGroup();  // the members number the group alike with every rank (flight_recorder.h)
    return nullptr;
  }
  std::vector<int> world;
  for (int r : ranks) world.push_back(world_ranks_[static_cast<size_t>(r)]);
  return std::make_unique<ProcessGroup>(base_, prefix, static_cast<int>(me - ranks.begin()),
                                        static_cast<int>(ranks.size()), factory_, std::move(world));
}

}  // namespace accel
