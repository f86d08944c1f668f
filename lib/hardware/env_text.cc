// SPDX-License-Identifier: Apache-2.0
#include "lib/hardware/env_text.h"

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

namespace {

std::string plural(long n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string deviceLine(const GpuDevice& d) {
  std::vector<std::string> parts = {fmt::format("GPU {}: {}", d.index, d.name.empty() ? "?" : d.name)};
  if (d.physical_index >= 0 && d.physical_index != d.index) {
    parts.push_back(fmt::format("physical GPU {}", d.physical_index));
  }
  if (d.memory_total) {
    parts.push_back(fmt::format("{} ({} free)", formatGiB(d.memory_total), formatGiB(d.memory_free)));
  }
  if (d.cc_major >= 0) parts.push_back(fmt::format("compute {}.{}", d.cc_major, d.cc_minor));
  if (!d.pci_bus_id.empty()) parts.push_back("PCI " + d.pci_bus_id);
  if (!d.uuid.empty()) parts.push_back(d.uuid);
  return "\t- " + join(parts, " | ") + "\n";
}

std::string topologyBlock(const GpuReport& g) {
  if (g.topology.empty()) return "";
  auto row = [](const std::string& label, const std::vector<std::string>& cells) {
    std::string line = fmt::format("\t{:<6}", label);
    for (const auto& cell : cells) line += fmt::format("{:<6}", cell);
    return line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  };
  std::vector<std::string> header;
  for (size_t j = 0; j < g.topology.size(); ++j) header.push_back("GPU" + std::to_string(j));
  std::string out = "- GPU topology (as `nvidia-smi topo -m`):\n" + row("", header);
  for (size_t i = 0; i < g.topology.size(); ++i) out += row(header[i], g.topology[i]);
  out +=
      "\tX = self, NV# = # NVLinks, PIX = one PCIe switch, PXB = several PCIe switches, "
      "PHB = PCIe host bridge, NODE = same NUMA node, SYS = across NUMA nodes\n";
  return out;
}

std::string gpuBlock(const GpuReport& g) {
  std::string visible =
      g.visible_devices ? "CUDA_VISIBLE_DEVICES=" + *g.visible_devices : std::string("CUDA_VISIBLE_DEVICES unset");
  std::string out;
  if (g.source.empty()) {
    out = fmt::format("- GPUs: none (no NVIDIA driver: {})\n", g.unavailable_reason);
  } else {
    std::string driver = g.driver_version.empty() ? "" : ", driver " + g.driver_version;
    std::string cuda = g.cuda_driver_version ? ", supports CUDA " + cudaVersionString(g.cuda_driver_version) : "";
    out = fmt::format("- GPUs: {} visible of {} ({}; via {}{}{})\n", g.devices.size(), g.physical_count, visible,
                      g.source == "nvml" ? "NVML" : "libcuda", driver, cuda);
    for (const auto& d : g.devices) out += deviceLine(d);
    out += topologyBlock(g);
  }
  for (const auto& w : g.warnings) out += "- Warning: " + w + "\n";
  return out;
}

}  // namespace

std::string envReportText(const EnvReport& r) {
  const auto& b = r.build;
  const auto& h = r.host;
  const auto& l = r.libraries;
  std::string out;
  out += fmt::format("- `accel` version: {} ({} build, {})\n", b.version, b.build_type, b.compiler);
  out += fmt::format("- Runtime backends at build: Gloo {}; NCCL {}\n", b.gloo_version.empty() ? "?" : b.gloo_version,
                     b.nccl_library.empty() ? std::string("not built (no CUDA/NCCL found)")
                                            : b.nccl_library + " (CUDA " + b.cuda_version + ")");
  out += fmt::format("- Platform: {}; Linux {} {}; glibc {}\n", h.os_name, h.kernel, h.arch, h.glibc);
  out += fmt::format("- CPU: {}; {}, {}, {} logical ({} usable), {}\n", h.cpu_model, plural(h.sockets, "socket"),
                     plural(h.physical_cores, "physical core"), h.logical_cores, h.usable_cores,
                     plural(h.numa_nodes, "NUMA node"));
  out +=
      fmt::format("- System RAM: {} total, {} available\n", formatGiB(h.memory_total), formatGiB(h.memory_available));
  out += gpuBlock(r.gpus);
  out +=
      "- NCCL: " + (l.nccl_version.empty() ? "not found (" + l.nccl_error + ")" : l.nccl_version + " (libnccl.so.2)") +
      "\n";
  out += "- CUDA runtime: " +
         (l.cuda_runtime_version.empty() ? "not found (" + l.cuda_runtime_error + ")"
                                         : l.cuda_runtime_version + " (" + l.cuda_runtime_library + ")") +
         "\n";
  out += "- Hostname: " + h.hostname + "\n";
  out += "- Network interfaces (main_process_ip candidates):\n";
  for (const auto& i : h.interfaces) {
    out += fmt::format("\t- {} {} {}{}{}\n", i.name, i.family, i.address, i.loopback ? " (loopback)" : "",
                       i.up ? "" : " (down)");
  }
  if (r.environment.empty()) {
    out += "- Launch environment: none of the variables that change a launch are set\n";
  } else {
    out += "- Launch environment:\n";
    for (const auto& [k, v] : r.environment) out += "\t- " + k + "=" + v + "\n";
  }
  return out;
}

}  // namespace accel
