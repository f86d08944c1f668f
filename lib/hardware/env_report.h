// SPDX-License-Identifier: Apache-2.0
// `accel env`: everything about this machine a launch depends on, as text for bug reports and
// as JSON for scripts. The JSON keys are a stable interface (schema_version 1):
//   schema_version                       1
//   accel      {version, compiler, build_type, gloo_version, cuda_at_build, nccl_at_build}
//   os         {name, kernel, arch, glibc}
//   cpu        {model, sockets, physical_cores, logical_cores, usable_cores, numa_nodes}
//   memory     {total_bytes, available_bytes}
//   gpus       {source: "nvml"|"cuda"|null, unavailable_reason, warnings[], driver_version,
//               cuda_driver_version ("12.4"|null), cuda_visible_devices (string|null),
//               physical_count, count, devices[{index, physical_index, name, uuid, pci_bus_id,
//               memory_total_bytes, memory_free_bytes, compute_capability ("9.0"|null)}],
//               topology (matrix of "X"/"NV#"/"PIX"/"PXB"/"PHB"/"NODE"/"SYS", or null)}
//   libraries  {nccl {version, error}, cuda_runtime {version, library, error}}
//   host       {hostname, interfaces[{name, family, address, loopback, up}]}
//   environment {NAME: value} for the launch-relevant variables that are set
// Unknown strings are null, never "". `accel env --json` adds `config` (see apps/cmd_env.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/build_info.h"
#include "lib/hardware/gpu_probe.h"
#include "lib/hardware/host_probe.h"
#include "lib/hardware/library_probe.h"

namespace accel {

struct EnvReport {
  BuildInfo build;
  HostReport host;
  GpuReport gpus;
  LibraryReport libraries;
  std::vector<std::pair<std::string, std::string>> environment;  // sorted by name
};

// Probes everything. Blocking (a few ms without GPUs); never throws.
EnvReport collectEnvReport();

// Variables that change a launch: CUDA_VISIBLE_DEVICES, NCCL_*, OMP_NUM_THREADS, MASTER_ADDR,
// MASTER_PORT, SLURM_*, HF_HOME, XDG_CACHE_HOME, … (those set in this process, sorted).
std::vector<std::pair<std::string, std::string>> launchEnvironment();

nlohmann::json envReportJson(const EnvReport& report);

// "23.47 GiB"
std::string formatGiB(unsigned long long bytes);

}  // namespace accel
