// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/numa_binding.h"
#include "lib/common/cpu_list.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/plan/cpu_affinity.h"

namespace accel::launch::plan {

namespace {

using Cpus = std::vector<int>;

// Where a worker sits: its node, its place among the node's workers (GPUs), and their count.
struct Seat {
  int node = -1;
  int rel = 0;
  int peers = 1;
};

class Binder {
 public:
  Binder(NumaMode mode, const facts::CpuTopology& t, const Cpus& allowed) : mode_(mode), t_(t), allowed_(allowed) {}

  Cpus usable(int node) const {
    auto it = t_.node_cpus.find(node);
    if (it == t_.node_cpus.end()) return {};
    if (allowed_.empty()) return it->second;
    Cpus out;
    std::set_intersection(it->second.begin(), it->second.end(), allowed_.begin(), allowed_.end(),
                          std::back_inserter(out));
    return out;
  }

  NumaPlace place(const Seat& seat, std::vector<std::string>& notes) const {
    const Cpus cpus = usable(seat.node);
    if (cpus.empty()) {
      notes.push_back(fmt::format("node {} has no CPU this launcher may use ({}): its workers run unpinned", seat.node,
                                  allowed_.empty() ? "its cpulist is missing" : "allowed: " + cpuListText(allowed_)));
      return {{}, seat.node};
    }
    switch (mode_) {
      case NumaMode::Node: return {cpus, seat.node};
      case NumaMode::Socket: return {socketCpus(cpus), seat.node};
      case NumaMode::Exclusive: return {share(groups(cpus, t_.core_of), seat, "physical cores", notes), seat.node};
      case NumaMode::CoreComplex: return {complexes(cpus, seat, notes), seat.node};
    }
    return {};
  }

 private:
  int socketOf(int cpu) const {
    auto it = t_.socket_of.find(cpu);
    return it == t_.socket_of.end() ? -1 : it->second;
  }

  // Every node whose lowest usable CPU is on the same socket as this one's (torch's test).
  Cpus socketCpus(const Cpus& own) const {
    const int socket = socketOf(own.front());
    std::set<int> out(own.begin(), own.end());
    for (int node : t_.nodes) {
      const Cpus other = usable(node);
      if (!other.empty() && socket >= 0 && socketOf(other.front()) == socket) out.insert(other.begin(), other.end());
    }
    return {out.begin(), out.end()};
  }

  // `cpus` grouped by `key` (a CPU without one is a group of its own), by ascending key.
  static std::vector<Cpus> groups(const Cpus& cpus, const std::map<int, int>& key) {
    std::map<int, Cpus> by;
    for (int c : cpus) {
      auto it = key.find(c);
      by[it == key.end() ? c : it->second].push_back(c);
    }
    std::vector<Cpus> out;
    for (auto& [k, g] : by) out.push_back(std::move(g));
    return out;
  }

  // A disjoint share of `units` for the worker at `seat`: the first `extra` take one more.
  static Cpus share(const std::vector<Cpus>& units, const Seat& seat, const char* what,
                    std::vector<std::string>& notes) {
    const int n = static_cast<int>(units.size());
    if (n < seat.peers) {
      notes.push_back(
          fmt::format("{} usable {} on node {} for {} workers: they share them, one each, "
                      "round robin (torchrun fails the launch)",
                      n, what, seat.node, seat.peers));
      return units[static_cast<size_t>(seat.rel % n)];
    }
    const int per = n / seat.peers, extra = n % seat.peers;
    const int start = seat.rel * per + std::min(seat.rel, extra);
    const int end = start + per + (seat.rel < extra ? 1 : 0);
    Cpus out;
    for (int i = start; i < end; ++i)
      out.insert(out.end(), units[static_cast<size_t>(i)].begin(), units[static_cast<size_t>(i)].end());
    std::sort(out.begin(), out.end());
    return out;
  }

  // The complexes, the largest first (then the lowest CPU), one per worker, round robin.
  Cpus complexes(const Cpus& cpus, const Seat& seat, std::vector<std::string>& notes) const {
    auto all = groups(cpus, t_.complex_of);
    std::stable_sort(all.begin(), all.end(), [](const Cpus& a, const Cpus& b) { return a.size() > b.size(); });
    if (static_cast<int>(all.size()) < seat.peers) {
      notes.push_back(fmt::format("{} cache complex(es) on node {} for {} workers: they share them", all.size(),
                                  seat.node, seat.peers));
    }
    return all[static_cast<size_t>(seat.rel) % all.size()];
  }

  NumaMode mode_;
  const facts::CpuTopology& t_;
  const Cpus& allowed_;
};

// GPU jobs: worker i on GPU i's node, among every visible GPU on that node.
std::vector<Seat> gpuSeats(const facts::CpuTopology& t, const std::vector<std::string>& gpus, int workers,
                           std::vector<std::string>& notes) {
  std::vector<int> node_of(gpus.size(), -1);
  for (size_t g = 0; g < gpus.size(); ++g) {
    auto it = t.gpu_node.find(gpus[g]);
    if (it != t.gpu_node.end()) node_of[g] = std::max(0, it->second);  // -1: node 0, as torch
  }
  std::vector<Seat> seats;
  for (int w = 0; w < workers; ++w) {
    if (w >= static_cast<int>(gpus.size())) {
      throw UsageError(fmt::format("--numa-binding: local rank {} has no GPU ({} visible)", w, gpus.size()),
                       "run one worker per GPU, or drop --numa-binding");
    }
    const int node = node_of[static_cast<size_t>(w)];
    if (node < 0) {
      notes.push_back(
          fmt::format("GPU {}'s NUMA node is unknown (no numa_node for PCI device '{}'): local rank {} "
                      "runs unpinned",
                      w, gpus[static_cast<size_t>(w)], w));
      seats.push_back({});
      continue;
    }
    Seat s{node, 0, 0};
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (node_of[g] != node) continue;
      if (static_cast<int>(g) < w) ++s.rel;
      ++s.peers;
    }
    seats.push_back(s);
  }
  return seats;
}

// CPU jobs: the workers in contiguous blocks over the nodes with usable CPUs.
std::vector<Seat> cpuSeats(const Binder& b, const facts::CpuTopology& t, int workers) {
  std::vector<int> nodes;
  for (int node : t.nodes) {
    if (!b.usable(node).empty()) nodes.push_back(node);
  }
  if (nodes.empty()) return std::vector<Seat>(static_cast<size_t>(workers));
  const long long n = static_cast<long long>(nodes.size());
  std::vector<Seat> seats;
  for (int w = 0; w < workers; ++w) seats.push_back({nodes[static_cast<size_t>(w * n / workers)], 0, 0});
  for (auto& s : seats) {
    for (const auto& other : seats) s.peers += other.node == s.node;
  }
  std::map<int, int> seen;
  for (auto& s : seats) s.rel = seen[s.node]++;
  return seats;
}

}  // namespace

std::optional<NumaMode> numaModeOf(std::string_view word) {
  if (word == "node") return NumaMode::Node;
  if (word == "socket") return NumaMode::Socket;
  if (word == "exclusive") return NumaMode::Exclusive;
  if (word == "core-complex") return NumaMode::CoreComplex;
  return std::nullopt;
}

std::string_view numaModeName(NumaMode mode) {
  switch (mode) {
    case NumaMode::Node: return "node";
    case NumaMode::Socket: return "socket";
    case NumaMode::Exclusive: return "exclusive";
    case NumaMode::CoreComplex: return "core-complex";
  }
  return "";
}

NumaBinding bindNuma(NumaMode mode, const facts::CpuTopology& t, const std::vector<int>& allowed,
                     const std::vector<std::string>& gpus, int workers) {
  NumaBinding out;
  out.workers.resize(static_cast<size_t>(std::max(0, workers)));
  if (!t.missing.empty()) {
    out.notes.push_back(
        fmt::format("--numa-binding {}: skipped, {}; the workers run unpinned", numaModeName(mode), t.missing));
    return out;
  }
  Binder binder(mode, t, allowed);
  std::vector<std::string> notes;
  const auto seats = gpus.empty() ? cpuSeats(binder, t, workers) : gpuSeats(t, gpus, workers, notes);
  for (size_t w = 0; w < seats.size(); ++w) {
    if (seats[w].node >= 0) out.workers[w] = binder.place(seats[w], notes);
  }
  std::set<std::string> said;
  for (auto& note : notes) {
    if (said.insert(note).second) out.notes.push_back(fmt::format("--numa-binding {}: {}", numaModeName(mode), note));
  }
  return out;
}

}  // namespace accel::launch::plan
