// SPDX-License-Identifier: Apache-2.0
// A stand-in for libcuda.so.1 (the CUDA driver API) with FAKE_CUDA_GPUS devices, for testing the
// probe's fallback when NVML is missing. Tests point ACCEL_CUDA_LIBRARY at it.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
int gpus() {
  const char* n = std::getenv("FAKE_CUDA_GPUS");
  return n ? std::atoi(n) : 0;
}
}  // namespace

extern "C" {

int cuInit(unsigned) { return 0; }

int cuDriverGetVersion(int* version) {
  *version = 12040;
  return 0;
}

int cuDeviceGetCount(int* count) {
  *count = gpus();
  return 0;
}

int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= gpus()) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = ordinal;
  return 0;
}

int cuDeviceGetName(char* name, int length, int device) {
  std::snprintf(name, static_cast<size_t>(length), "NVIDIA A100-SXM4-40GB (fake %d)", device);
  return 0;
}

int cuDeviceTotalMem_v2(size_t* bytes, int) {
  *bytes = 40ull * 1024 * 1024 * 1024;
  return 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int) {
  *value = attribute == 75 ? 8 : 0;  // compute capability 8.0
  return 0;
}

int cuDeviceGetPCIBusId(char* bus, int length, int device) {
  std::snprintf(bus, static_cast<size_t>(length), "0000:%02X:00.0", 0x07 + device);
  return 0;
}

int cuDeviceGetUuid_v2(unsigned char* uuid, int device) {
  std::memset(uuid, 0xab, 16);
  uuid[15] = static_cast<unsigned char>(device);
  return 0;
}

}  // extern "C"
