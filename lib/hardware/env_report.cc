// SPDX-License-Identifier: Apache-2.0
#include "lib/hardware/env_report.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/environment.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

using nlohmann::json;

json orNull(const std::string& s) { return s.empty() ? json() : json(s); }

json deviceJson(const GpuDevice& d) {
  return {{"index", d.index},
          {"physical_index", d.physical_index < 0 ? json() : json(d.physical_index)},
          {"name", orNull(d.name)},
          {"uuid", orNull(d.uuid)},
          {"pci_bus_id", orNull(d.pci_bus_id)},
          {"memory_total_bytes", d.memory_total ? json(d.memory_total) : json()},
          {"memory_free_bytes", d.memory_total ? json(d.memory_free) : json()},
          {"compute_capability", d.cc_major < 0 ? json() : json(fmt::format("{}.{}", d.cc_major, d.cc_minor))}};
}

json gpusJson(const GpuReport& g) {
  json devices = json::array();
  for (const auto& d : g.devices) devices.push_back(deviceJson(d));
  return {{"source", orNull(g.source)},
          {"unavailable_reason", orNull(g.unavailable_reason)},
          {"warnings", g.warnings},
          {"driver_version", orNull(g.driver_version)},
          {"cuda_driver_version", orNull(cudaVersionString(g.cuda_driver_version))},
          {"cuda_visible_devices", g.visible_devices ? json(*g.visible_devices) : json()},
          {"physical_count", g.physical_count},
          {"count", g.devices.size()},
          {"devices", devices},
          {"topology", g.topology.empty() ? json() : json(g.topology)}};
}

bool launchRelevant(const std::string& name) {
  namespace E = launch_env;
  static const char* exact[] = {E::kCudaVisibleDevices,
                                env::kCudaDeviceOrder.name(),
                                E::kOmpNumThreads,
                                E::kMasterAddr,
                                E::kMasterPort,
                                E::kWorldSize,
                                E::kRank,
                                E::kLocalRank,
                                env::kHfHome.name(),
                                env::kXdgCacheHome.name(),
                                env::kNvmlLibrary.name(),
                                env::kPython.name(),
                                E::kStoreToken};
  static const char* prefixes[] = {"NCCL_", "SLURM_", "ACCELERATE_", "GLOO_", "TORCH_"};
  for (const char* e : exact) {
    if (name == e) return true;
  }
  for (const char* p : prefixes) {
    if (startsWith(name, p)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> launchEnvironment() {
  std::vector<std::pair<std::string, std::string>> out;  // sorted by name, as the map is
  for (auto& [name, value] : processEnvironment()) {
    if (launchRelevant(name)) out.emplace_back(name, value);
  }
  return out;
}

EnvReport collectEnvReport() { return {buildInfo(), probeHost(), probeGpus(), probeLibraries(), launchEnvironment()}; }

std::string formatGiB(unsigned long long bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

json envReportJson(const EnvReport& r) {
  const auto& b = r.build;
  const auto& h = r.host;
  json interfaces = json::array();
  for (const auto& i : h.interfaces) {
    interfaces.push_back(
        {{"name", i.name}, {"family", i.family}, {"address", i.address}, {"loopback", i.loopback}, {"up", i.up}});
  }
  json environment = json::object();
  for (const auto& [k, v] : r.environment) environment[k] = v;
  const auto& l = r.libraries;
  return {
      {"schema_version", 1},
      {"accel",
       {{"version", b.version},
        {"compiler", b.compiler},
        {"build_type", orNull(b.build_type)},
        {"gloo_version", orNull(b.gloo_version)},
        {"cuda_at_build", orNull(b.cuda_version)},
        {"nccl_at_build", orNull(b.nccl_library)}}},
      {"os",
       {{"name", orNull(h.os_name)},
        {"kernel", orNull(h.kernel)},
        {"arch", orNull(h.arch)},
        {"glibc", orNull(h.glibc)}}},
      {"cpu",
       {{"model", orNull(h.cpu_model)},
        {"sockets", h.sockets},
        {"physical_cores", h.physical_cores},
        {"logical_cores", h.logical_cores},
        {"usable_cores", h.usable_cores},
        {"numa_nodes", h.numa_nodes}}},
      {"memory", {{"total_bytes", h.memory_total}, {"available_bytes", h.memory_available}}},
      {"gpus", gpusJson(r.gpus)},
      {"libraries",
       {{"nccl", {{"version", orNull(l.nccl_version)}, {"error", orNull(l.nccl_error)}}},
        {"cuda_runtime",
         {{"version", orNull(l.cuda_runtime_version)},
          {"library", orNull(l.cuda_runtime_library)},
          {"error", orNull(l.cuda_runtime_error)}}}}},
      {"host", {{"hostname", orNull(h.hostname)}, {"interfaces", interfaces}}},
      {"environment", environment},
  };
}

}  // namespace accel
