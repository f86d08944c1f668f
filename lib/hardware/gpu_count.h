// SPDX-License-Identifier: Apache-2.0
// How many NVIDIA GPUs this process may use. Loads the driver's libraries at run time, so accel
// never links CUDA and works the same on machines without GPUs. Thread-compatible.
#pragma once

#include <string>

namespace accel {

struct GpuCount {
  int count = 0;       // visible GPUs after CUDA_VISIBLE_DEVICES
  std::string source;  // "nvml", "cuda", or why none were found
};

// NVML (libnvidia-ml.so.1, or $ACCEL_NVML_LIBRARY) first, then libcuda.so.1. Never throws.
GpuCount countGpus();

// Applies CUDA_VISIBLE_DEVICES to a physical count: entries up to the first invalid one, as
// CUDA does; unset means all, empty means none.
int applyVisibleDevices(int physical, const char* visible);

}  // namespace accel
