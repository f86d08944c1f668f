// SPDX-License-Identifier: Apache-2.0
#include "lib/hardware/gpu_probe.h"

#include <cstdlib>
#include <set>

#include "lib/common/strings.h"
#include "lib/hardware/gpu_backends.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

// Index into `physical` named by one CUDA_VISIBLE_DEVICES entry, or -1.
long findDevice(const std::vector<GpuDevice>& physical, const std::string& entry) {
  if (auto index = parseInt(entry)) {
    bool valid = *index >= 0 && *index < static_cast<long long>(physical.size());
    return valid ? static_cast<long>(*index) : -1;
  }
  if (!startsWith(entry, "GPU-")) return -1;  // MIG-… and garbage name no whole GPU
  long found = -1;
  for (size_t i = 0; i < physical.size(); ++i) {
    if (startsWith(physical[i].uuid, entry)) {
      if (found >= 0) return -1;  // an ambiguous prefix names nothing
      found = static_cast<long>(i);
    }
  }
  return found;
}

void applyVisibleDevices(GpuReport& report) {
  const char* visible = std::getenv(launch_env::kCudaVisibleDevices);
  if (visible) report.visible_devices = visible;
  if (report.source != "nvml" || !visible) return;  // libcuda has filtered already
  std::vector<size_t> chosen = selectVisible(report.devices, visible);
  std::vector<GpuDevice> devices;
  std::vector<std::vector<std::string>> topology;
  for (size_t a = 0; a < chosen.size(); ++a) {
    devices.push_back(report.devices[chosen[a]]);
    devices.back().index = static_cast<int>(a);
    if (report.topology.empty()) continue;
    topology.emplace_back();
    for (size_t b : chosen) topology.back().push_back(report.topology[chosen[a]][b]);
  }
  report.devices = std::move(devices);
  report.topology.clear();
  if (report.devices.size() >= 2) report.topology = std::move(topology);
}

}  // namespace

std::vector<size_t> selectVisible(const std::vector<GpuDevice>& physical, const std::string& spec) {
  std::vector<size_t> chosen;
  std::set<long> seen;
  for (const auto& raw : split(spec, ',')) {
    long position = findDevice(physical, trim(raw));
    if (position < 0 || !seen.insert(position).second) break;
    chosen.push_back(static_cast<size_t>(position));
  }
  return chosen;
}

std::string cudaVersionString(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

GpuReport probeGpus() {
  GpuReport report;
  if (gpu_backends::probeNvml(report)) {
    report.source = "nvml";
  } else {
    const std::string nvml_reason = report.unavailable_reason;
    std::vector<std::string> warnings = std::move(report.warnings);
    report = GpuReport{};
    if (gpu_backends::probeCuda(report)) {
      report.source = "cuda";
      warnings.push_back("NVML unavailable (" + nvml_reason + "); GPUs read from libcuda");
    } else {
      report.unavailable_reason = nvml_reason + "; " + report.unavailable_reason;
    }
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
  }
  applyVisibleDevices(report);
  return report;
}

}  // namespace accel
