// SPDX-License-Identifier: Apache-2.0
// NVML's public ABI (nvml.h), declared here as nvml_backend.cc does: no CUDA header at build time.
#include "lib/hardware/gpu_processes.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/dynamic_library.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"

namespace accel {

namespace {

using Device = struct NvmlDevice*;
struct PciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct ProcessInfo {  // nvmlProcessInfo_t of the _v3 entry point
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};
constexpr int kSuccess = 0;
constexpr int kInsufficientSize = 7;

struct Api {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, Device*) = nullptr;
  int (*pci)(Device, PciInfo*) = nullptr;
  int (*processes)(Device, unsigned*, ProcessInfo*) = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;  // optional: -1 where NVML lacks it

  explicit Api(const DynamicLibrary& lib)
      : init(lib.symbol<decltype(init)>("nvmlInit_v2")),
        shutdown(lib.symbol<decltype(shutdown)>("nvmlShutdown")),
        count(lib.symbol<decltype(count)>("nvmlDeviceGetCount_v2")),
        handle(lib.symbol<decltype(handle)>("nvmlDeviceGetHandleByIndex_v2")),
        pci(lib.symbol<decltype(pci)>("nvmlDeviceGetPciInfo_v3")),
        processes(lib.symbol<decltype(processes)>("nvmlDeviceGetComputeRunningProcesses_v3")),
        utilization(lib.symbol<decltype(utilization)>("nvmlDeviceGetUtilizationRates")) {}
  bool complete() const { return init && shutdown && count && handle && pci && processes; }
};

// One device's processes; false when NVML would not say.
bool listDevice(const Api& api, Device dev, int index, const std::string& bus, std::vector<GpuProcess>& out) {
  std::vector<ProcessInfo> infos(16);
  for (int tries = 0; tries < 4; ++tries) {
    unsigned n = static_cast<unsigned>(infos.size());
    const int rc = api.processes(dev, &n, infos.data());
    if (rc == kInsufficientSize) {
      infos.resize(n + 8);
      continue;
    }
    if (rc != kSuccess) return false;
    Utilization busy{};
    const int percent = api.utilization && api.utilization(dev, &busy) == kSuccess ? static_cast<int>(busy.gpu) : -1;
    for (unsigned i = 0; i < n; ++i)
      out.push_back({index, bus, static_cast<long>(infos[i].pid), infos[i].used_gpu_memory, percent});
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::vector<GpuProcess>> gpuProcesses(const std::vector<std::string>& bus_ids, std::string& error) {
  const std::string& named = env::kNvmlLibrary.value();
  DynamicLibrary lib(named.empty() ? "libnvidia-ml.so.1" : named);
  if (!lib) return error = lib.error(), std::nullopt;
  Api api(lib);
  if (!api.complete()) return error = "NVML lacks nvmlDeviceGetComputeRunningProcesses_v3", std::nullopt;
  if (api.init() != kSuccess) return error = "nvmlInit_v2 failed", std::nullopt;
  std::vector<GpuProcess> out;
  unsigned count = 0;
  bool ok = api.count(&count) == kSuccess;
  for (unsigned i = 0; ok && i < count; ++i) {
    Device dev = nullptr;
    PciInfo pci{};
    if (api.handle(i, &dev) != kSuccess || api.pci(dev, &pci) != kSuccess) continue;
    const std::string bus = pci.bus_id;
    const bool ours = bus_ids.empty() || std::any_of(bus_ids.begin(), bus_ids.end(),
                                                     [&](const std::string& b) { return toLower(b) == toLower(bus); });
    if (ours && !listDevice(api, dev, static_cast<int>(i), bus, out)) {
      ok = false;
      error = fmt::format("nvmlDeviceGetComputeRunningProcesses_v3 failed for GPU {}", i);
    }
  }
  api.shutdown();
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace accel
