// SPDX-License-Identifier: Apache-2.0
// Internal to gpu_probe: the two driver libraries it can read. Each fills `report` and returns
// true when the library loaded and initialised; otherwise sets report.unavailable_reason.
#pragma once

#include "lib/hardware/gpu_probe.h"

namespace accel::gpu_backends {

// All physical GPUs, with the physical topology matrix (CUDA_VISIBLE_DEVICES not applied).
bool probeNvml(GpuReport& report);
// The visible GPUs as libcuda enumerates them (it applies CUDA_VISIBLE_DEVICES itself).
bool probeCuda(GpuReport& report);

}  // namespace accel::gpu_backends
