// SPDX-License-Identifier: Apache-2.0
// numa_plan: accel's --numa-binding plan (lib/launch/plan/numa_binding.h) for a sysfs tree, for
// tests/peers/check_numa_binding.py to set beside torch's on the same tree.
//   numa_plan ROOT MODE WORKERS ALLOWED GPU,GPU,...|-
// ROOT: the tree (its devices/, bus/); ALLOWED: the launcher's CPUs ("" = every CPU); GPUs:
// PCI addresses in CUDA order, or - for a CPU job. Prints one JSON object: {"workers": [{"cpus":
// "0-3", "node": 0}, ...], "notes": [...]} or {"error": "..."}; exit 0 either way, 2 on usage.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/common/cpu_list.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/facts/cpu_topology.h"
#include "lib/launch/plan/cpu_affinity.h"
#include "lib/launch/plan/numa_binding.h"

using namespace accel::launch;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: numa_plan ROOT MODE WORKERS ALLOWED GPUS|-\n");
    return 2;
  }
  const auto mode = plan::numaModeOf(argv[2]);
  const auto workers = accel::parseInt(argv[3]);
  const auto allowed = accel::parseCpuList(argv[4]);
  if (!mode || !workers || !allowed) {
    std::fprintf(stderr, "numa_plan: bad MODE, WORKERS or ALLOWED\n");
    return 2;
  }
  std::vector<std::string> gpus;
  if (std::string(argv[5]) != "-") gpus = accel::split(argv[5], ',');
  nlohmann::json out;
  try {
    const auto topology = facts::readCpuTopology(argv[1], gpus);
    const auto b = plan::bindNuma(*mode, topology, *allowed, gpus, static_cast<int>(*workers));
    out["workers"] = nlohmann::json::array();
    for (const auto& w : b.workers)
      out["workers"].push_back({{"cpus", accel::cpuListText(w.cpus)}, {"node", w.memory_node}});
    out["notes"] = b.notes;
  } catch (const accel::Error& e) {
    out = {{"error", e.what()}};
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
