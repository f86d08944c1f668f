// SPDX-License-Identifier: Apache-2.0
// A stand-in for libnvidia-ml.so.1 on machines without GPUs: the NVML entry points accel's
// probe calls, driven by environment variables. Tests point ACCEL_NVML_LIBRARY at it.
//   FAKE_NVML_GPUS    device count (default 0)
//   FAKE_NVML_NAME    device name (default "NVIDIA H100 80GB HBM3")
//   FAKE_NVML_DRIVER  driver version (default "560.35.03")
//   FAKE_NVML_MATRIX  connections as `nvidia-smi topo -m` prints them: rows separated by ';',
//                     cells by ','; "NV<n>" means n direct NVLinks. Unset: an NVSwitch board,
//                     every GPU with 18 NVLinks into the switch fabric (and SYS as PCIe path).
//   FAKE_NVML_FAIL    one call that fails with NVML_ERROR_UNKNOWN: init, count, name, uuid,
//                     memory, capability, pci, topology
//   FAKE_NVML_PROCESSES_FILE  the processes on the GPUs, read at each call: lines "GPU PID BYTES
//                     UNTIL", listed until the epoch second UNTIL (0: always), as a driver that
//                     frees a dead process's memory late
// Device i: UUID "GPU-iiiiiiii-…", PCI bus 0x18+0x10*i, 80 GiB with i GiB in use, compute 9.0.
#include <sys/time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kUninitialized = 1;
constexpr int kUnknown = 999;
constexpr unsigned long long kGiB = 1024ull * 1024 * 1024;

struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct Memory {
  unsigned long long total, free, used;
};
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
constexpr int kInsufficientSize = 7;

bool initialised = false;

bool failing(const char* call) {
  const char* fail = std::getenv("FAKE_NVML_FAIL");
  return fail && std::strcmp(fail, call) == 0;
}

unsigned gpuCount() {
  const char* n = std::getenv("FAKE_NVML_GPUS");
  return n ? static_cast<unsigned>(std::atoi(n)) : 0;
}

// The device index behind a handle, or -1 for a bad handle.
int indexOf(void* handle) {
  auto i = static_cast<long>(reinterpret_cast<std::uintptr_t>(handle)) - 1;
  return i >= 0 && i < static_cast<long>(gpuCount()) ? static_cast<int>(i) : -1;
}

std::string cell(int i, int j) {
  if (i == j) return "X";
  const char* matrix = std::getenv("FAKE_NVML_MATRIX");
  if (!matrix) return "SYS";
  std::string m = matrix;
  int row = 0, col = 0;
  std::string current;
  for (char c : m + ";") {
    if (c == ',' || c == ';') {
      if (row == i && col == j) return current;
      current.clear();
      if (c == ',') {
        ++col;
      } else {
        ++row;
        col = 0;
      }
    } else {
      current += c;
    }
  }
  return "SYS";
}

bool nvswitch() { return std::getenv("FAKE_NVML_MATRIX") == nullptr; }

int nvlinks(int i, int j) {
  if (nvswitch()) return 0;
  std::string c = cell(i, j);
  return c.rfind("NV", 0) == 0 ? std::atoi(c.c_str() + 2) : 0;
}

void fillPci(int i, PciInfo* pci) {
  std::memset(pci, 0, sizeof *pci);
  pci->bus = 0x18 + 0x10 * static_cast<unsigned>(i);
  std::snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:%02X:00.0", pci->bus);
  std::snprintf(pci->bus_id_legacy, sizeof pci->bus_id_legacy, "0000:%02X:00.0", pci->bus);
}

// The GPU at the far end of `link` of GPU i: links are numbered across peers in index order.
int linkPeer(int i, unsigned link) {
  unsigned seen = 0;
  for (int j = 0; j < static_cast<int>(gpuCount()); ++j) {
    if (j == i) continue;
    seen += static_cast<unsigned>(nvlinks(i, j));
    if (link < seen) return j;
  }
  return -1;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (failing("init")) return kUnknown;
  initialised = true;
  return kSuccess;
}

int nvmlShutdown() {
  initialised = false;
  return kSuccess;
}

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case kSuccess: return "Success";
    case kUninitialized: return "Uninitialized";
    case kInvalidArgument: return "Invalid Argument";
    default: return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  const char* v = std::getenv("FAKE_NVML_DRIVER");
  std::snprintf(version, length, "%s", v ? v : "560.35.03");
  return kSuccess;
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 12060;
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialised) return kUninitialized;
  if (failing("count")) return kUnknown;
  *count = gpuCount();
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  if (!initialised) return kUninitialized;
  if (index >= gpuCount()) return kInvalidArgument;
  *handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1);
  return kSuccess;
}

int nvmlDeviceGetName(void* dev, char* name, unsigned length) {
  if (indexOf(dev) < 0) return kInvalidArgument;
  if (failing("name")) return kUnknown;
  const char* n = std::getenv("FAKE_NVML_NAME");
  std::snprintf(name, length, "%s", n ? n : "NVIDIA H100 80GB HBM3");
  return kSuccess;
}

int nvmlDeviceGetUUID(void* dev, char* uuid, unsigned length) {
  int i = indexOf(dev);
  if (i < 0) return kInvalidArgument;
  if (failing("uuid")) return kUnknown;
  std::snprintf(uuid, length, "GPU-%08x-1111-4222-8333-%012x", 0x11111111u * static_cast<unsigned>(i), i);
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* dev, Memory* memory) {
  int i = indexOf(dev);
  if (i < 0) return kInvalidArgument;
  if (failing("memory")) return kUnknown;
  memory->total = 80 * kGiB;
  memory->used = static_cast<unsigned long long>(i) * kGiB;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

int nvmlDeviceGetCudaComputeCapability(void* dev, int* major, int* minor) {
  if (indexOf(dev) < 0) return kInvalidArgument;
  if (failing("capability")) return kUnknown;
  *major = 9;
  *minor = 0;
  return kSuccess;
}

int nvmlDeviceGetPciInfo_v3(void* dev, PciInfo* pci) {
  int i = indexOf(dev);
  if (i < 0) return kInvalidArgument;
  if (failing("pci")) return kUnknown;
  fillPci(i, pci);
  return kSuccess;
}

int nvmlDeviceGetTopologyCommonAncestor(void* a, void* b, int* level) {
  int i = indexOf(a), j = indexOf(b);
  if (i < 0 || j < 0) return kInvalidArgument;
  if (failing("topology")) return kUnknown;
  std::string c = cell(i, j);
  *level = c == "PIX" ? 10 : c == "PXB" ? 20 : c == "PHB" ? 30 : c == "NODE" ? 40 : 50;
  return kSuccess;
}

int nvmlDeviceGetNvLinkState(void* dev, unsigned link, int* active) {
  int i = indexOf(dev);
  if (i < 0 || link >= 18) return kInvalidArgument;
  *active = nvswitch() || linkPeer(i, link) >= 0 ? 1 : 0;
  return kSuccess;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(void* dev, unsigned link, int* type) {
  int i = indexOf(dev);
  if (i < 0 || link >= 18) return kInvalidArgument;
  *type = nvswitch() ? 2 : 0;  // NVML_NVLINK_DEVICE_TYPE_SWITCH : _GPU
  return kSuccess;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* dev, unsigned link, PciInfo* pci) {
  int i = indexOf(dev);
  if (i < 0) return kInvalidArgument;
  if (nvswitch()) {  // the switch's own PCI address, which matches no GPU
    std::memset(pci, 0, sizeof *pci);
    std::snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:C0:00.0");
    return kSuccess;
  }
  int peer = linkPeer(i, link);
  if (peer < 0) return kInvalidArgument;
  fillPci(peer, pci);
  return kSuccess;
}

// GPU i is 40 + i percent busy; its memory controller half of that.
int nvmlDeviceGetUtilizationRates(void* dev, unsigned* rates) {
  const int i = indexOf(dev);
  if (i < 0) return kInvalidArgument;
  if (failing("utilization")) return kUnknown;
  rates[0] = 40 + static_cast<unsigned>(i);
  rates[1] = rates[0] / 2;
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, ProcessInfo* infos) {
  const int i = indexOf(dev);
  if (i < 0) return kInvalidArgument;
  std::vector<ProcessInfo> listed;
  const char* path = std::getenv("FAKE_NVML_PROCESSES_FILE");
  if (FILE* f = path ? std::fopen(path, "r") : nullptr) {
    timeval now{};
    gettimeofday(&now, nullptr);
    int gpu = 0;
    unsigned pid = 0;
    unsigned long long bytes = 0;
    double until = 0;
    while (std::fscanf(f, "%d %u %llu %lf", &gpu, &pid, &bytes, &until) == 4) {
      if (gpu == i && (until == 0 || until > static_cast<double>(now.tv_sec) + now.tv_usec / 1e6))
        listed.push_back({pid, bytes, 0, 0});
    }
    std::fclose(f);
  }
  const bool fits = *count >= listed.size();
  *count = static_cast<unsigned>(listed.size());
  if (!fits) return kInsufficientSize;
  for (size_t k = 0; k < listed.size(); ++k) infos[k] = listed[k];
  return kSuccess;
}

}  // extern "C"
