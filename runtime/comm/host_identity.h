// SPDX-License-Identifier: Apache-2.0
// Which ranks of a group can share memory. A rank's identity is the kernel's boot id (the same
// in every container of one booted machine, different on every other machine) with the inodes
// of its network and PID namespaces (ranks that can reach each other's /proc and loopback), or
// what the caller says instead (CpuTransportOptions::host_id: ACCEL_HOST_ID, with which the
// tests make one machine look like several, through RuntimeSettings).
#pragma once

#include <string>
#include <vector>

#include "runtime/store/store.h"

namespace accel {

std::string hostIdentity();

// Where the ranks of a group are: hosts are numbered in the order of their lowest rank, and
// each host lists its ranks in ascending order (a rank's local index is its place there).
struct HostLayout {
  std::vector<int> host_of;
  std::vector<std::vector<int>> hosts;

  int localIndex(int rank) const;
  bool spreadOut() const;        // every host has one rank: nothing to share
  std::string describe() const;  // "2 hosts: ranks 0,1 | 2,3"
};

// The layout of ranks whose identities are `ids` (rank r's at r). Pure.
HostLayout layoutOf(const std::vector<std::string>& ids);

// Collective: every rank of the group publishes `id` in `store` and reads the others'.
HostLayout exchangeHostIds(Store& store, int rank, int size, const std::string& id);

}  // namespace accel
