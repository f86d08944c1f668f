// SPDX-License-Identifier: Apache-2.0
#include "lib/hardware/gpu_count.h"

#include <dlfcn.h>

#include <cstdlib>

#include "lib/common/strings.h"

namespace accel {

namespace {

// Never dlopen a bare "libcuda.so": on CUDA images it is the stub, which always fails.
int countWithNvml(std::string& why) {
  const char* override_path = std::getenv("ACCEL_NVML_LIBRARY");
  const char* name = override_path && *override_path ? override_path : "libnvidia-ml.so.1";
  void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = ::dlerror();
    return -1;
  }
  using InitFn = int (*)();
  using CountFn = int (*)(unsigned*);
  auto init = reinterpret_cast<InitFn>(::dlsym(lib, "nvmlInit_v2"));
  auto count = reinterpret_cast<CountFn>(::dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto shutdown = reinterpret_cast<InitFn>(::dlsym(lib, "nvmlShutdown"));
  int result = -1;
  unsigned n = 0;
  if (!init || !count) {
    why = "NVML lacks nvmlInit_v2/nvmlDeviceGetCount_v2";
  } else if (init() != 0) {
    why = "nvmlInit_v2 failed";
  } else {
    result = count(&n) == 0 ? static_cast<int>(n) : -1;
    if (result < 0) why = "nvmlDeviceGetCount_v2 failed";
    if (shutdown) shutdown();
  }
  ::dlclose(lib);
  return result;
}

int countWithCuda(std::string& why) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = ::dlerror();
    return -1;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(::dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(::dlsym(lib, "cuDeviceGetCount"));
  int n = -1;
  if (init && count && init(0) == 0 && count(&n) != 0) n = -1;
  if (n < 0) why = "cuInit/cuDeviceGetCount failed";
  ::dlclose(lib);
  return n;
}

}  // namespace

int applyVisibleDevices(int physical, const char* visible) {
  if (!visible) return physical;
  int usable = 0;
  for (const auto& entry : split(visible, ',')) {
    std::string e = trim(entry);
    if (e.empty()) break;
    bool valid = false;
    if (auto index = parseInt(e)) {
      valid = *index >= 0 && *index < physical;
    } else {  // GPU-… / MIG-… UUIDs name a device without an index
      valid = startsWith(e, "GPU-") || startsWith(e, "MIG-");
    }
    if (!valid) break;
    ++usable;
  }
  return usable;
}

GpuCount countGpus() {
  std::string nvml_why, cuda_why;
  int physical = countWithNvml(nvml_why);
  std::string source = "nvml";
  if (physical < 0) {
    physical = countWithCuda(cuda_why);
    source = "cuda";
  }
  if (physical < 0) return {0, "no NVIDIA driver (" + nvml_why + "; " + cuda_why + ")"};
  return {applyVisibleDevices(physical, std::getenv("CUDA_VISIBLE_DEVICES")), source};
}

}  // namespace accel
