// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API (libcuda.so.1) read through dlopen, for machines where NVML is missing.
// Never the bare "libcuda.so": on CUDA images that is the toolkit's stub, which always fails.
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "lib/common/dynamic_library.h"
#include "lib/common/variables.h"
#include "lib/hardware/gpu_backends.h"

namespace accel::gpu_backends {

namespace {

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;

struct CudaDriver {
  int (*init)(unsigned) = nullptr;
  int (*driver_version)(int*) = nullptr;
  int (*count)(int*) = nullptr;
  int (*get)(int*, int) = nullptr;
  int (*name)(char*, int, int) = nullptr;
  int (*total_mem)(size_t*, int) = nullptr;
  int (*attribute)(int*, int, int) = nullptr;
  int (*pci_bus_id)(char*, int, int) = nullptr;
  int (*uuid)(unsigned char*, int) = nullptr;  // CUuuid is 16 bytes

  explicit CudaDriver(const DynamicLibrary& lib) {
    init = lib.symbol<decltype(init)>("cuInit");
    driver_version = lib.symbol<decltype(driver_version)>("cuDriverGetVersion");
    count = lib.symbol<decltype(count)>("cuDeviceGetCount");
    get = lib.symbol<decltype(get)>("cuDeviceGet");
    name = lib.symbol<decltype(name)>("cuDeviceGetName");
    total_mem = lib.symbol<decltype(total_mem)>("cuDeviceTotalMem_v2");
    attribute = lib.symbol<decltype(attribute)>("cuDeviceGetAttribute");
    pci_bus_id = lib.symbol<decltype(pci_bus_id)>("cuDeviceGetPCIBusId");
    uuid = lib.symbol<decltype(uuid)>("cuDeviceGetUuid_v2");
  }
};

std::string formatUuid(const unsigned char* b) {
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

GpuDevice readDevice(const CudaDriver& api, int ordinal) {
  GpuDevice d;
  d.index = ordinal;
  int dev = 0;
  if (!api.get || api.get(&dev, ordinal) != 0) return d;
  char text[128] = {};
  if (api.name && api.name(text, sizeof text, dev) == 0) d.name = text;
  size_t bytes = 0;
  if (api.total_mem && api.total_mem(&bytes, dev) == 0) d.memory_total = bytes;
  if (api.attribute) {
    api.attribute(&d.cc_major, kComputeCapabilityMajor, dev);
    api.attribute(&d.cc_minor, kComputeCapabilityMinor, dev);
  }
  char bus[32] = {};
  if (api.pci_bus_id && api.pci_bus_id(bus, sizeof bus, dev) == 0) d.pci_bus_id = bus;
  unsigned char id[16] = {};
  if (api.uuid && api.uuid(id, dev) == 0) d.uuid = formatUuid(id);
  return d;
}

}  // namespace

bool probeCuda(GpuReport& report) {
  const std::string& named = env::kCudaLibrary.value();
  DynamicLibrary lib(named.empty() ? "libcuda.so.1" : named);
  if (!lib) {
    report.unavailable_reason = lib.error();
    return false;
  }
  CudaDriver api(lib);
  if (!api.init || !api.count) {
    report.unavailable_reason = "libcuda.so.1 lacks cuInit / cuDeviceGetCount";
    return false;
  }
  if (int rc = api.init(0); rc != 0) {
    report.unavailable_reason = fmt::format("cuInit failed with CUDA error {}", rc);
    report.warnings.push_back("libcuda loaded but " + report.unavailable_reason);
    return false;
  }
  if (api.driver_version) api.driver_version(&report.cuda_driver_version);
  int count = 0;
  if (int rc = api.count(&count); rc != 0) {
    report.unavailable_reason = fmt::format("cuDeviceGetCount failed with CUDA error {}", rc);
    return false;
  }
  for (int i = 0; i < count; ++i) report.devices.push_back(readDevice(api, i));
  report.physical_count = count;
  return true;
}

}  // namespace accel::gpu_backends
