// SPDX-License-Identifier: Apache-2.0
// The entries' create functions live here, not with their transports: shared memory falls back
// to Gloo and the hierarchy is made of both, and the transports never include each other.
#include "runtime/comm/cpu_transport.h"

#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/comm/call_watch.h"
#include "runtime/comm/hierarchical/hierarchical_backend.h"
#include "runtime/comm/shm/shm_backend.h"
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

void logChoice(const GroupFacts& g, const CpuTransportOptions& o, const std::string& line) {
  if (o.log && g.rank == 0) o.log(line);
}

// This rank's machine's ranks over shared memory, or Gloo where some member cannot map the
// segment (`transport` says which). They meet under "host<N>" in the group's `store`.
std::unique_ptr<Backend> hostBackend(Store& store, const GroupFacts& g, const CpuTransportOptions& o,
                                     const std::string& part, std::string& transport) {
  const HostLayout& layout = *g.layout;
  const int host = layout.host_of[static_cast<size_t>(g.rank)];
  const std::vector<int>& members = layout.hosts[static_cast<size_t>(host)];
  const int index = layout.localIndex(g.rank);
  const int n = static_cast<int>(members.size());
  PrefixStore mine(fmt::format("host{}", host), store);
  if (n > 1 && o.shm) {
    comm::shm::ShmOptions shm;
    shm.timeout = o.gloo.timeout;
    shm.slot_bytes = o.shm_chunk_bytes ? o.shm_chunk_bytes : comm::shm::ShmOptions::slotBytesFor(n);
    shm.names = members;
    shm.diagnose = o.gloo.diagnose;
    shm.part = part;
    std::string why_not;
    PrefixStore segment("shm", mine);
    if (auto b = comm::shm::ShmBackend::create(segment, index, n, shm, why_not)) {
      transport = "shared memory";
      return b;
    }
    if (index == 0)
      warnLine(o, fmt::format("shared memory cannot be used by ranks {} ({}); they use Gloo", fmt::join(members, ","),
                              why_not));
  }
  transport = "Gloo";
  PrefixStore gloo("gloo", mine);
  GlooOptions options = o.gloo;
  options.part = part;
  if (!part.empty()) options.names = members;
  return std::make_unique<GlooBackend>(gloo, index, n, options);
}

bool glooServes(const GroupFacts& g) { return g.size == 1 || !g.shm || (g.layout && g.layout->spreadOut()); }

std::unique_ptr<Backend> createGloo(Store& store, const GroupFacts& g, const CpuTransportOptions& o) {
  if (!g.layout) {  // the ranks never exchanged their hosts: the whole store is Gloo's
    logChoice(g, o, fmt::format("{} rank{}: Gloo{}", g.size, g.size == 1 ? "" : "s", g.shm ? "" : " (ACCEL_SHM=0)"));
    return std::make_unique<GlooBackend>(store, g.rank, g.size, o.gloo);
  }
  logChoice(g, o, fmt::format("{} ranks, {}: Gloo", g.size, g.layout->describe()));
  PrefixStore gloo("gloo", store);
  return std::make_unique<GlooBackend>(gloo, g.rank, g.size, o.gloo);
}

bool shmServes(const GroupFacts& g) { return g.layout && g.layout->hosts.size() == 1; }

std::unique_ptr<Backend> createShm(Store& store, const GroupFacts& g, const CpuTransportOptions& o) {
  std::string transport;
  auto b = hostBackend(store, g, o, "", transport);
  logChoice(g, o, fmt::format("{} ranks on one host: {}", g.size, transport));
  return b;
}

bool hierarchyServes(const GroupFacts& g) { return g.layout && g.layout->hosts.size() > 1 && !g.layout->spreadOut(); }

std::unique_ptr<Backend> createHierarchy(Store& store, const GroupFacts& g, const CpuTransportOptions& o) {
  const HostLayout& layout = *g.layout;
  const int host = layout.host_of[static_cast<size_t>(g.rank)];
  const auto& members = layout.hosts[static_cast<size_t>(host)];
  std::string transport;
  const std::string part = fmt::format("its step within its machine (ranks {})", fmt::join(members, ","));
  auto local = hostBackend(store, g, o, part, transport);
  std::unique_ptr<Backend> leaders;
  PrefixStore between("leaders", store);
  std::vector<int> leader_ranks;
  for (const auto& ranks : layout.hosts) leader_ranks.push_back(ranks.front());
  const int hosts = static_cast<int>(layout.hosts.size());
  if (members.front() == g.rank) {
    GlooOptions gloo = o.gloo;
    gloo.names = leader_ranks;
    gloo.part = fmt::format("its step between the machines' leaders (ranks {})", fmt::join(leader_ranks, ","));
    leaders = std::make_unique<GlooBackend>(between, host, hosts, gloo);
  }
  // Every rank reads the leaders' verdict: a non-leader's own error is only "its leader gave up".
  auto leaders_watch = std::make_shared<CallWatch>(between, host, hosts, leader_ranks);
  logChoice(g, o,
            fmt::format("{} ranks, {}: {} within a host (the first host's transport), Gloo between hosts' leaders",
                        g.size, layout.describe(), transport));
  return std::make_unique<comm::hierarchical::HierarchicalBackend>(g.rank, layout, std::move(local), std::move(leaders),
                                                                   std::move(leaders_watch));
}

constexpr CpuTransport kCpuTransports[] = {
    {"Gloo", glooServes, createGloo},
    {"shared memory", shmServes, createShm},
    {"shared memory + Gloo", hierarchyServes, createHierarchy},
};

}  // namespace

const CpuTransport& chooseCpuTransport(const GroupFacts& group) {
  for (const CpuTransport& t : kCpuTransports) {
    if (t.can_serve(group)) return t;
  }
  throw std::logic_error(fmt::format("no CPU transport serves a group of {} ranks", group.size));
}

std::unique_ptr<Backend> makeCpuBackend(Store& store, int rank, int size, const CpuTransportOptions& o) {
  GroupFacts group{rank, size, o.shm, std::nullopt};
  if (size > 1 && o.shm) {
    group.layout = exchangeHostIds(store, rank, size, o.host_id.empty() ? hostIdentity() : o.host_id);
  }
  return chooseCpuTransport(group).create(store, group, o);
}

}  // namespace accel
