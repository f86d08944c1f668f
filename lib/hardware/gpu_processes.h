// SPDX-License-Identifier: Apache-2.0
// The processes that hold memory on a machine's GPUs, as NVML lists them
// (nvmlDeviceGetComputeRunningProcesses), for the launcher's check that a round's processes
// freed their GPU memory before the next round starts. NVML is opened for each call (dlopen,
// ACCEL_NVML_LIBRARY or libnvidia-ml.so.1), so a machine without it is answered, not broken.
// PIDs are NVML's: those of the host's PID namespace. `accel top` and /metrics show each rank's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace accel {

struct GpuProcess {
  int gpu = 0;             // NVML's index
  std::string pci_bus_id;  // "00000000:18:00.0"
  long pid = 0;
  unsigned long long used_bytes = 0;
  int gpu_percent = -1;  // the GPU's utilisation (nvmlDeviceGetUtilizationRates), -1 where unknown
};

// On the GPUs whose PCI bus ids are `bus_ids` (every GPU where it is empty); nullopt with
// `error` where NVML is missing or fails.
std::optional<std::vector<GpuProcess>> gpuProcesses(const std::vector<std::string>& bus_ids, std::string& error);

}  // namespace accel
