// SPDX-License-Identifier: Apache-2.0
// The NVIDIA GPUs this process may use, found at run time: NVML (libnvidia-ml.so.1, or
// $ACCEL_NVML_LIBRARY) is loaded with dlopen, with libcuda.so.1 ($ACCEL_CUDA_LIBRARY) as a
// fallback for count, names and memory, so accel links
// no GPU library and works the same on machines without GPUs. Blocking (a few ms); never throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace accel {

struct GpuDevice {
  int index = 0;            // CUDA device index, after CUDA_VISIBLE_DEVICES
  int physical_index = -1;  // NVML index (PCI bus order); -1 when only libcuda answered
  std::string name;
  std::string uuid;                     // "GPU-…"; empty when unknown
  std::string pci_bus_id;               // "00000000:18:00.0"; empty when unknown
  unsigned long long memory_total = 0;  // bytes; 0 when unknown
  unsigned long long memory_free = 0;
  int cc_major = -1;  // compute capability; -1 when unknown
  int cc_minor = -1;
};

struct GpuReport {
  std::string source;                          // "nvml", "cuda", or "" when no driver library worked
  std::string unavailable_reason;              // why not, when source is empty
  std::vector<std::string> warnings;           // failed calls of a library that did load
  std::string driver_version;                  // "550.54.15"; empty when unknown
  int cuda_driver_version = 0;                 // highest CUDA the driver supports, e.g. 12040; 0 = unknown
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES, when set
  int physical_count = 0;                      // GPUs in the machine before CUDA_VISIBLE_DEVICES
  std::vector<GpuDevice> devices;              // the visible GPUs, in CUDA order
  // Connection between visible GPUs i and j as `nvidia-smi topo -m` prints it: "X" (self),
  // "NV<n>" (n NVLinks), "PIX", "PXB", "PHB", "NODE", "SYS". Empty below two GPUs.
  std::vector<std::vector<std::string>> topology;
};

GpuReport probeGpus();

// CUDA's reading of CUDA_VISIBLE_DEVICES over `physical` devices: indices or (prefixes of)
// UUIDs, in the order given, up to the first entry that names no device or repeats one.
// Returns positions into `physical`.
std::vector<size_t> selectVisible(const std::vector<GpuDevice>& physical, const std::string& spec);

// "12.4" for 12040; "" for 0.
std::string cudaVersionString(int version);

}  // namespace accel
