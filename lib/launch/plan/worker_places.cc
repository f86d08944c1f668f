// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/worker_places.h"
#include "lib/common/cpu_list.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/config/validate.h"
#include "lib/launch/plan/cpu_affinity.h"

namespace accel::launch::plan {

namespace {

// The visible GPUs' PCI addresses in the order the workers use them: gpu_ids' order where given.
std::vector<std::string> workerGpus(const settings::LaunchSettings& s, const facts::Machine& f) {
  std::vector<std::string> all;
  for (const auto& gpu : f.gpus) all.push_back(facts::pciAddress(gpu.pci_bus_id));
  std::string problem;
  auto ids = parseGpuIds(s.keys.text("gpu_ids"), problem);
  if (!ids || ids->empty()) return all;
  std::vector<std::string> chosen;
  for (int id : *ids) chosen.push_back(id < static_cast<int>(all.size()) ? all[static_cast<size_t>(id)] : "");
  return chosen;
}

// --bind_cores_to_rank: DeepSpeed's numactl -C shares (its get_numactl_cmd): the list (or
// the physical cores 0..N-1) cut into equal runs, one per local worker, the rest unused.
std::vector<NumaPlace> coreShares(const settings::LaunchSettings& s, const facts::Machine& f, int count) {
  const std::string& text = *s.supervision.bind_cores.value;
  std::vector<int> cores;
  if (text.empty()) {
    for (int c = 0; c < f.physical_cores; ++c) cores.push_back(c);
  } else if (auto parsed = accel::parseCpuList(text); parsed && !parsed->empty()) {
    cores = *parsed;
  } else {
    throw UsageError(fmt::format("--bind_core_list '{}' is not a list of cores", text), "e.g. 1,3-5,7");
  }
  const int per = static_cast<int>(cores.size()) / std::max(1, count);
  if (per < 1) {
    throw UsageError(fmt::format("--bind_cores_to_rank: {} core(s) for {} workers; at least one core needs to be "
                                 "assigned to each rank",
                                 cores.size(), count),
                     "give more cores with --bind_core_list, or run fewer workers");
  }
  std::vector<NumaPlace> places;
  for (int w = 0; w < count; ++w) {
    places.push_back({{cores.begin() + w * per, cores.begin() + (w + 1) * per}, -1});
  }
  return places;
}

// --numa-binding (or enable_cpu_affinity on a GPU job): each worker's CPUs and memory node.
std::vector<NumaPlace> numaPlaces(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Facts& f, int count) {
  const NumaMode mode = *numaModeOf(*s.supervision.numa_binding.value);
  const bool gpus = !s.paradigm.use_cpu.value && f.machine.visible_gpus > 0;
  facts::CpuTopology topology;
  if (f.cpu_topology) {
    topology = f.cpu_topology();
  } else {
    topology.missing = "no topology was read";
  }
  NumaBinding b = bindNuma(mode, topology, f.machine.usable_cpus,
                           gpus ? workerGpus(s, f.machine) : std::vector<std::string>{}, count);
  for (auto& note : b.notes) p.notes.push_back("warning: " + note);
  return b.workers;
}

}  // namespace

std::vector<NumaPlace> workerPlaces(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Facts& facts,
                                    int count) {
  if (s.supervision.bind_cores.value) return coreShares(s, facts.machine, count);
  if (s.supervision.numa_binding.value) return numaPlaces(p, s, facts, count);
  const facts::Machine& f = facts.machine;
  if (!s.keys.flag("enable_cpu_affinity")) return std::vector<NumaPlace>(static_cast<size_t>(count));
  if (f.usable_cpus.empty()) {
    p.notes.push_back("warning: enable_cpu_affinity: cannot read the launcher's CPU affinity; workers run unpinned");
  } else if (static_cast<size_t>(count) > f.usable_cpus.size()) {
    p.notes.push_back(
        fmt::format("warning: enable_cpu_affinity: {} workers but {} usable CPU(s) ({}); workers share "
                    "CPUs, one each, round robin",
                    count, f.usable_cpus.size(), cpuListText(f.usable_cpus)));
  }
  std::vector<NumaPlace> places;
  for (auto& share : splitCpus(f.usable_cpus, count)) places.push_back({std::move(share), -1});
  return places;
}

}  // namespace accel::launch::plan
