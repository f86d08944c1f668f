// SPDX-License-Identifier: Apache-2.0
// Where this machine's CPUs, memory and GPUs sit, as Linux's sysfs says it: NUMA nodes and their
// CPUs (/sys/devices/system/node), each CPU's socket, physical core and largest shared cache
// (/sys/devices/system/cpu/cpuN/{topology,cache}), and each GPU's NUMA node (its PCI device's
// numa_node). The files are those torch 2.15's torch/numa/binding.py reads, so both see one
// machine. Read from a root folder ("/sys" on a real machine; tests give checked-in trees).
// Missing files leave their entries out: plan/numa_binding.h says what a mode then does.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::launch::facts {

struct CpuTopology {
  std::string missing;                        // why there is no NUMA information ("" when there is)
  std::vector<int> nodes;                     // node/possible, ascending
  std::map<int, std::vector<int>> node_cpus;  // node → its CPUs (node<N>/cpulist), ascending
  std::map<int, int> socket_of;               // CPU → topology/physical_package_id
  std::map<int, int> core_of;                 // CPU → lowest CPU of topology/thread_siblings_list
  std::map<int, int> complex_of;              // CPU → lowest CPU sharing its highest-level data/unified cache
  std::map<std::string, int> gpu_node;        // a GPU's PCI address ("0000:18:00.0") → numa_node (-1 kept)
};

// The topology under `root` (the sysfs mount point), with the NUMA node of each GPU in
// `pci_addresses` (sysfs form, pciAddress below). Never throws.
CpuTopology readCpuTopology(const std::string& root, const std::vector<std::string>& pci_addresses);

// Its NUMA nodes and their CPUs only (`missing`, `nodes`, `node_cpus`), without a file per CPU.
CpuTopology readNumaNodes(const std::string& root);

// NVML's bus id ("00000000:18:00.0") in sysfs' form ("0000:18:00.0"): a 4-digit domain, lower
// case, function 0 (as torch forms it from the device's properties). "" for an unreadable one.
std::string pciAddress(const std::string& bus_id);

}  // namespace accel::launch::facts
