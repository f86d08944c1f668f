// SPDX-License-Identifier: Apache-2.0
// --numa-binding MODE: each local worker's CPUs and memory node, with torchrun 2.15's modes and
// meanings (torch/numa/binding.py): worker i uses GPU i (the launcher's CUDA order); its GPU's
// NUMA node is its PCI device's numa_node (-1 counts as node 0), and of that node only the CPUs
// the launcher may use count (its affinity: a cgroup's cpuset shows there).
//   node          the node's CPUs;
//   socket        the CPUs of every node on the node's socket;
//   exclusive     a disjoint share of the node's physical cores for each GPU on the node,
//                 hyperthread siblings kept together, the first GPUs taking one more core each;
//   core-complex  the CPUs sharing one largest cache (an L3 complex), the largest complexes
//                 first, one per GPU on the node (shared round robin where there are fewer).
// accel's extensions, each said where it applies: no numactl (the child set-up pins itself);
// the memory policy MPOL_PREFERRED on the worker's node (its allocations land near its GPU
// while there is room, elsewhere after, never an out-of-memory kill as MPOL_BIND risks);
// CPU jobs (--cpu): the workers spread over the nodes that have usable CPUs in contiguous
// blocks, each block then bound as the GPUs of that node would be; where torch fails the launch
// (fewer cores than GPUs on a node, a node without usable CPUs, no NUMA information) accel binds
// what it can, shares or skips the rest and says so in a note. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/launch/facts/cpu_topology.h"

namespace accel::launch::plan {

enum class NumaMode { Node, Socket, Exclusive, CoreComplex };

// "node", "socket", "exclusive", "core-complex" (torchrun's words); nullopt for others.
std::optional<NumaMode> numaModeOf(std::string_view word);
std::string_view numaModeName(NumaMode mode);

// One worker's place: CPUs to pin to (empty: unpinned) and the node its memory prefers (-1: none).
struct NumaPlace {
  std::vector<int> cpus;
  int memory_node = -1;
  bool operator==(const NumaPlace&) const = default;
};

struct NumaBinding {
  std::vector<NumaPlace> workers;  // one per local worker, in local rank order
  std::vector<std::string> notes;  // what was shared or skipped, and why
};

// `allowed`: the launcher's CPUs (empty: unknown, every CPU counts). `gpus`: the visible GPUs'
// PCI addresses in the launcher's CUDA order, the one each local worker uses ("" where unknown);
// empty for a CPU job. Throws UsageError when a worker has no GPU.
NumaBinding bindNuma(NumaMode mode, const facts::CpuTopology& topology, const std::vector<int>& allowed,
                     const std::vector<std::string>& gpus, int workers);

}  // namespace accel::launch::plan
