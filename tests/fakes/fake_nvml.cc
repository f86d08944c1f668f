// SPDX-License-Identifier: Apache-2.0
// A stand-in for libnvidia-ml.so.1 on machines without GPUs: implements the NVML entry points
// accel's probe calls. FAKE_NVML_GPUS sets the device count; FAKE_NVML_FAIL=init makes
// nvmlInit_v2 fail. Tests point ACCEL_NVML_LIBRARY at this library.
#include <cstdlib>
#include <cstring>

namespace {
constexpr int kSuccess = 0;
constexpr int kErrorUninitialized = 1;
constexpr int kErrorUnknown = 999;
bool initialised = false;

bool failing(const char* call) {
  const char* fail = std::getenv("FAKE_NVML_FAIL");
  return fail && std::strcmp(fail, call) == 0;
}
}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (failing("init")) return kErrorUnknown;
  initialised = true;
  return kSuccess;
}

int nvmlShutdown() {
  initialised = false;
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialised) return kErrorUninitialized;
  if (failing("count")) return kErrorUnknown;
  const char* n = std::getenv("FAKE_NVML_GPUS");
  *count = n ? static_cast<unsigned>(std::atoi(n)) : 0;
  return kSuccess;
}

}  // extern "C"
