// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/cpu_transport.h"

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/comm/call_watch.h"
#include "runtime/comm/hierarchical_backend.h"
#include "runtime/comm/host_identity.h"
#include "runtime/comm/shm_backend.h"
#include "runtime/store/prefix_store.h"

namespace accel {

namespace {

void warnLine(const CpuTransportOptions& o, const std::string& line) {
  if (o.warn) {
    o.warn(line);
  } else {
    std::cerr << "accel-runtime: " << line << std::endl;
  }
}

// The ranks of one host (`members`, group ranks) over shared memory, or Gloo when it cannot be
// mapped there. `store` is theirs alone.
std::unique_ptr<Backend> hostBackend(Store& store, int index, const std::vector<int>& members,
                                     const CpuTransportOptions& o, std::string& transport, const std::string& part) {
  const int n = static_cast<int>(members.size());
  if (n > 1 && o.shm) {
    ShmOptions shm;
    shm.timeout = o.gloo.timeout;
    shm.slot_bytes = o.shm_chunk_bytes ? o.shm_chunk_bytes : ShmOptions::slotBytesFor(n);
    shm.names = members;
    shm.diagnose = o.gloo.diagnose;
    shm.part = part;
    std::string why_not;
    PrefixStore segment("shm", store);
    if (auto b = ShmBackend::create(segment, index, n, shm, why_not)) {
      transport = "shared memory";
      return b;
    }
    if (index == 0)
      warnLine(o, fmt::format("shared memory cannot be used by ranks {} ({}); they use Gloo", fmt::join(members, ","),
                              why_not));
  }
  transport = "Gloo";
  PrefixStore gloo("gloo", store);
  GlooOptions options = o.gloo;
  options.part = part;
  if (!part.empty()) options.names = members;
  return std::make_unique<GlooBackend>(gloo, index, n, options);
}

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(Store& store, int rank, int size, const CpuTransportOptions& o) {
  if (size == 1 || !o.shm) {
    if (o.log && rank == 0)
      o.log(fmt::format("{} rank{}: Gloo{}", size, size == 1 ? "" : "s", o.shm ? "" : " (ACCEL_SHM=0)"));
    return std::make_unique<GlooBackend>(store, rank, size, o.gloo);
  }
  const HostLayout layout = exchangeHostIds(store, rank, size, o.host_id.empty() ? hostIdentity() : o.host_id);
  if (layout.spreadOut()) {
    if (o.log && rank == 0) o.log(fmt::format("{} ranks, {}: Gloo", size, layout.describe()));
    PrefixStore gloo("gloo", store);
    return std::make_unique<GlooBackend>(gloo, rank, size, o.gloo);
  }
  const int host = layout.host_of[static_cast<size_t>(rank)];
  const auto& members = layout.hosts[static_cast<size_t>(host)];
  PrefixStore mine(fmt::format("host{}", host), store);
  std::string transport;
  const std::string part =
      layout.hosts.size() == 1 ? "" : fmt::format("its step within its machine (ranks {})", fmt::join(members, ","));
  auto local = hostBackend(mine, layout.localIndex(rank), members, o, transport, part);
  if (layout.hosts.size() == 1) {
    if (o.log && rank == 0) o.log(fmt::format("{} ranks on one host: {}", size, transport));
    return local;
  }
  std::unique_ptr<Backend> leaders;
  PrefixStore between("leaders", store);
  std::vector<int> leader_ranks;
  for (const auto& ranks : layout.hosts) leader_ranks.push_back(ranks.front());
  const int hosts = static_cast<int>(layout.hosts.size());
  if (members.front() == rank) {
    GlooOptions gloo = o.gloo;
    gloo.names = leader_ranks;
    gloo.part = fmt::format("its step between the machines' leaders (ranks {})", fmt::join(leader_ranks, ","));
    leaders = std::make_unique<GlooBackend>(between, host, hosts, gloo);
  }
  // Every rank reads the leaders' verdict: a non-leader's own error is only "its leader gave up".
  auto leaders_watch = std::make_shared<CallWatch>(between, host, hosts, leader_ranks);
  if (o.log && rank == 0) {
    o.log(fmt::format("{} ranks, {}: {} within a host (the first host's transport), Gloo between hosts' leaders", size,
                      layout.describe(), transport));
  }
  return std::make_unique<HierarchicalBackend>(rank, layout, std::move(local), std::move(leaders),
                                               std::move(leaders_watch));
}

}  // namespace accel
