// SPDX-License-Identifier: Apache-2.0
// NVML read through dlopen. The declarations below are NVML's public ABI (nvml.h); declaring
// them here keeps accel free of any CUDA header or library at build time.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/dynamic_library.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/hardware/gpu_backends.h"

namespace accel::gpu_backends {

namespace {

using Device = struct NvmlDevice*;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlPciInfo {  // nvmlPciInfo_t as filled by the _v3 / _v2 entry points
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;
constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr int kNvLinkToSwitch = 2;    // NVML_NVLINK_DEVICE_TYPE_SWITCH

struct Nvml {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*cuda_driver_version)(int*) = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, Device*) = nullptr;
  int (*name)(Device, char*, unsigned) = nullptr;
  int (*uuid)(Device, char*, unsigned) = nullptr;
  int (*memory)(Device, NvmlMemory*) = nullptr;
  int (*capability)(Device, int*, int*) = nullptr;
  int (*pci)(Device, NvmlPciInfo*) = nullptr;
  int (*ancestor)(Device, Device, int*) = nullptr;
  int (*link_state)(Device, unsigned, int*) = nullptr;
  int (*link_remote_pci)(Device, unsigned, NvmlPciInfo*) = nullptr;
  int (*link_remote_type)(Device, unsigned, int*) = nullptr;

  explicit Nvml(const DynamicLibrary& lib) {
    init = lib.symbol<decltype(init)>("nvmlInit_v2");
    shutdown = lib.symbol<decltype(shutdown)>("nvmlShutdown");
    error_string = lib.symbol<decltype(error_string)>("nvmlErrorString");
    driver_version = lib.symbol<decltype(driver_version)>("nvmlSystemGetDriverVersion");
    cuda_driver_version = lib.symbol<decltype(cuda_driver_version)>("nvmlSystemGetCudaDriverVersion_v2");
    if (!cuda_driver_version) {
      cuda_driver_version = lib.symbol<decltype(cuda_driver_version)>("nvmlSystemGetCudaDriverVersion");
    }
    count = lib.symbol<decltype(count)>("nvmlDeviceGetCount_v2");
    handle = lib.symbol<decltype(handle)>("nvmlDeviceGetHandleByIndex_v2");
    name = lib.symbol<decltype(name)>("nvmlDeviceGetName");
    uuid = lib.symbol<decltype(uuid)>("nvmlDeviceGetUUID");
    memory = lib.symbol<decltype(memory)>("nvmlDeviceGetMemoryInfo");
    capability = lib.symbol<decltype(capability)>("nvmlDeviceGetCudaComputeCapability");
    pci = lib.symbol<decltype(pci)>("nvmlDeviceGetPciInfo_v3");
    ancestor = lib.symbol<decltype(ancestor)>("nvmlDeviceGetTopologyCommonAncestor");
    link_state = lib.symbol<decltype(link_state)>("nvmlDeviceGetNvLinkState");
    link_remote_pci = lib.symbol<decltype(link_remote_pci)>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
    link_remote_type = lib.symbol<decltype(link_remote_type)>("nvmlDeviceGetNvLinkRemoteDeviceType");
  }

  std::string describe(int rc) const {
    const char* text = error_string ? error_string(rc) : nullptr;
    return text ? fmt::format("{} (NVML error {})", text, rc) : fmt::format("NVML error {}", rc);
  }
};

// Records a failed per-device call and says whether the call succeeded.
bool ok(const Nvml& api, GpuReport& report, int rc, const char* call, int gpu) {
  if (rc == kSuccess) return true;
  if (rc != kNotSupported) {
    report.warnings.push_back(fmt::format("{} failed for GPU {}: {}", call, gpu, api.describe(rc)));
  }
  return false;
}

GpuDevice readDevice(const Nvml& api, GpuReport& report, Device dev, int i) {
  GpuDevice d;
  d.index = d.physical_index = i;
  char text[128] = {};
  if (api.name && ok(api, report, api.name(dev, text, sizeof text), "nvmlDeviceGetName", i)) d.name = text;
  std::memset(text, 0, sizeof text);
  if (api.uuid && ok(api, report, api.uuid(dev, text, sizeof text), "nvmlDeviceGetUUID", i)) d.uuid = text;
  NvmlMemory mem{};
  if (api.memory && ok(api, report, api.memory(dev, &mem), "nvmlDeviceGetMemoryInfo", i)) {
    d.memory_total = mem.total;
    d.memory_free = mem.free;
  }
  if (api.capability) {
    ok(api, report, api.capability(dev, &d.cc_major, &d.cc_minor), "nvmlDeviceGetCudaComputeCapability", i);
  }
  NvmlPciInfo pci{};
  if (api.pci && ok(api, report, api.pci(dev, &pci), "nvmlDeviceGetPciInfo_v3", i)) {
    d.pci_bus_id = pci.bus_id;
  }
  return d;
}

std::string levelLabel(int level) {
  switch (level) {
    case 0: return "PIX";  // NVML_TOPOLOGY_INTERNAL: the same board
    case 10: return "PIX";
    case 20: return "PXB";
    case 30: return "PHB";
    case 40: return "NODE";
    default: return "SYS";
  }
}

// NVLinks between each pair of GPUs: direct links (the remote end is that GPU) plus, on
// NVSwitch systems, the links both GPUs have into the switch fabric, which connects every GPU
// to every other (nvidia-smi shows NV18 between all pairs of an 8x H100 SXM board).
std::vector<std::vector<int>> countNvLinks(const Nvml& api, const std::vector<Device>& handles,
                                           const std::vector<GpuDevice>& devices) {
  const size_t n = handles.size();
  std::vector<std::vector<int>> links(n, std::vector<int>(n, 0));
  std::vector<int> switch_links(n, 0);
  if (!api.link_state || !api.link_remote_pci) return links;
  for (size_t i = 0; i < n; ++i) {
    for (unsigned link = 0; link < kMaxNvLinks; ++link) {
      int active = 0;
      NvmlPciInfo remote{};
      if (api.link_state(handles[i], link, &active) != kSuccess || !active) continue;
      int type = -1;
      if (api.link_remote_type && api.link_remote_type(handles[i], link, &type) == kSuccess &&
          type == kNvLinkToSwitch) {
        ++switch_links[i];
        continue;
      }
      if (api.link_remote_pci(handles[i], link, &remote) != kSuccess) continue;
      for (size_t j = 0; j < n; ++j) {
        if (j != i && toLower(devices[j].pci_bus_id) == toLower(remote.bus_id)) ++links[i][j];
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i != j) links[i][j] += std::min(switch_links[i], switch_links[j]);
    }
  }
  return links;
}

void readTopology(const Nvml& api, GpuReport& report, const std::vector<Device>& handles) {
  const size_t n = handles.size();
  if (n < 2 || !api.ancestor) return;
  auto links = countNvLinks(api, handles, report.devices);
  report.topology.assign(n, std::vector<std::string>(n, "X"));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      int level = 0;
      if (links[i][j] > 0) {
        report.topology[i][j] = "NV" + std::to_string(links[i][j]);
      } else if (api.ancestor(handles[i], handles[j], &level) == kSuccess) {
        report.topology[i][j] = levelLabel(level);
      } else {
        report.topology[i][j] = "?";
      }
    }
  }
}

}  // namespace

bool probeNvml(GpuReport& report) {
  const std::string& named = env::kNvmlLibrary.value();
  const std::string path = named.empty() ? "libnvidia-ml.so.1" : named;
  DynamicLibrary lib(path);
  if (!lib) {
    report.unavailable_reason = lib.error();
    return false;
  }
  Nvml api(lib);
  if (!api.init || !api.count || !api.handle) {
    report.unavailable_reason = path + " lacks nvmlInit_v2 / nvmlDeviceGetCount_v2";
    return false;
  }
  if (int rc = api.init(); rc != kSuccess) {
    report.unavailable_reason = "nvmlInit_v2 failed: " + api.describe(rc);
    report.warnings.push_back("NVML loaded but " + report.unavailable_reason);
    return false;
  }
  char version[96] = {};
  if (api.driver_version && api.driver_version(version, sizeof version) == kSuccess) {
    report.driver_version = version;
  }
  if (api.cuda_driver_version) api.cuda_driver_version(&report.cuda_driver_version);
  unsigned count = 0;
  bool usable = true;
  if (int rc = api.count(&count); rc != kSuccess) {
    report.unavailable_reason = "nvmlDeviceGetCount_v2 failed: " + api.describe(rc);
    report.warnings.push_back("NVML loaded but " + report.unavailable_reason);
    usable = false;
  }
  std::vector<Device> handles;
  for (unsigned i = 0; usable && i < count; ++i) {
    Device dev = nullptr;
    if (!ok(api, report, api.handle(i, &dev), "nvmlDeviceGetHandleByIndex_v2", static_cast<int>(i))) {
      continue;
    }
    handles.push_back(dev);
    report.devices.push_back(readDevice(api, report, dev, static_cast<int>(i)));
  }
  if (usable) readTopology(api, report, handles);
  report.physical_count = static_cast<int>(report.devices.size());
  if (api.shutdown) api.shutdown();
  return usable;
}

}  // namespace accel::gpu_backends
