// SPDX-License-Identifier: Apache-2.0
// A group of ranks with a backend, its own store namespace, and subgroups (torch's new_group).
// The store passed in must outlive the group and every subgroup made from it. Not copyable;
// collective calls follow the Backend's rules (same order on every rank).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/comm/backend.h"
#include "runtime/store/prefix_store.h"

namespace accel {

class ProcessGroup {
 public:
  // Makes the backend for `size` ranks meeting through `store`; `world_ranks[r]` is the rank of
  // the whole job that is this group's rank r (for messages about ranks).
  using BackendFactory =
      std::function<std::unique_ptr<Backend>(Store& store, int rank, int size, const std::vector<int>& world_ranks)>;

  // `world_ranks`: empty for the job's own group (rank r is world rank r).
  ProcessGroup(Store& store, const std::string& prefix, int rank, int size, BackendFactory factory,
               std::vector<int> world_ranks = {});

  int rank() const { return rank_; }
  int size() const { return size_; }
  Backend& backend() { return *backend_; }

  // A group of the listed ranks (numbered in this group). Every rank of this group must call it,
  // in the same order and with the same list; ranks not listed get nullptr.
  std::unique_ptr<ProcessGroup> newGroup(std::vector<int> ranks);

 private:
  Store& base_;
  std::string prefix_;
  PrefixStore store_;
  int rank_, size_;
  BackendFactory factory_;
  std::vector<int> world_ranks_;
  std::unique_ptr<Backend> backend_;
  int groups_made_ = 0;
};

}  // namespace accel
