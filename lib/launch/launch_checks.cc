// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/launch_checks.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/validate.h"

namespace accel {

// The store serves at most 2^20 ranks (kMaxWorldSize in runtime/store/tcp_store_protocol.h) and
// one launcher supervises at most 4096 workers: larger counts are typos, refused before a plan of
// that size is built (or a count is narrowed to int).
namespace {

constexpr long long kMaxWorldSize = 1 << 20;
constexpr long long kMaxLocalWorkers = 4096;

}  // namespace

void checkSizes(const LaunchSettings& s) {
  const long long processes = s.integer("num_processes"), machines = s.integer("num_machines");
  for (std::string key : {"num_machines", "num_processes"}) {
    if (s.integer(key) > kMaxWorldSize) {
      throw UsageError(fmt::format("{} {} ({}) is more than accel can launch ({} at most)", key, s.integer(key),
                                   s.origin(key), kMaxWorldSize),
                       key == "num_processes" ? "num_processes counts processes across all machines" : "");
    }
  }
  const long long local = s.integer("nproc_per_node");
  if (local > kMaxLocalWorkers) {
    throw UsageError(
        fmt::format("num_processes {} ({}) over {} machine(s) is {} workers on this machine; accel starts at "
                    "most {} on one machine",
                    processes, s.origin("num_processes"), machines, local, kMaxLocalWorkers),
        "lower --num_processes, or spread the processes over more machines with --num_machines");
  }
}

void checkCounts(const LaunchSettings& s, const LaunchFacts& facts, int per_machine) {
  const long long processes = s.integer("num_processes"), machines = s.integer("num_machines");
  if (processes < 1) throw UsageError(fmt::format("num_processes must be at least 1, got {}", processes));
  if (machines < 1) throw UsageError(fmt::format("num_machines must be at least 1, got {}", machines));
  if (processes < machines) {
    throw UsageError(
        fmt::format("num_processes {} ({}) is fewer than num_machines {} ({}): every machine runs at least "
                    "one process",
                    processes, s.origin("num_processes"), machines, s.origin("num_machines")),
        "num_processes counts processes across all machines");
  }
  if (per_machine < 1) throw UsageError(fmt::format("nproc_per_node must be at least 1, got {}", per_machine));
  const bool join_order = s.integer("machine_rank") == -1 && startsWith(s.origin("machine_rank"), "assigned");
  if ((s.integer("machine_rank") < 0 && !join_order) || s.integer("machine_rank") >= machines) {
    throw UsageError(fmt::format("machine_rank {} ({}) must be from 0 to {}", s.integer("machine_rank"),
                                 s.origin("machine_rank"), machines - 1));
  }
  if (s.text("distributed_type") == "MULTI_GPU" && s.origin("distributed_type") == "command line" && processes < 2) {
    throw UsageError("--multi_gpu needs at least 2 processes, got num_processes " + std::to_string(processes));
  }
  if (s.flag("use_cpu")) return;
  std::string problem;
  auto ids = parseGpuIds(s.text("gpu_ids"), problem);
  if (!ids) throw UsageError(problem, "use `all` or GPU indices such as 0,1");
  for (int id : *ids) {
    if (id >= facts.physical_gpus) {
      throw UsageError(fmt::format("gpu_ids ({}) names GPU {}, but this machine has {} GPU(s)", s.origin("gpu_ids"), id,
                                   facts.physical_gpus),
                       "run `accel env` to list the GPUs");
    }
  }
  int usable = ids->empty() ? facts.visible_gpus : static_cast<int>(ids->size());
  if (usable == 0) {
    throw UsageError(fmt::format("distributed_type {} needs GPUs, but none is visible ({})", s.text("distributed_type"),
                                 facts.gpu_note.empty() ? "0 GPUs" : facts.gpu_note),
                     "pass --cpu to run CPU workers");
  }
  if (per_machine > usable && !s.flag("torchrun")) {  // torchrun lets processes share a GPU
    throw UsageError(fmt::format("{} processes per machine but only {} GPU(s) {}: one process per GPU", per_machine,
                                 usable, ids->empty() ? "visible" : "in gpu_ids"),
                     fmt::format("pass --num_processes {} (per machine: {}), or --cpu for CPU workers",
                                 usable * s.integer("num_machines"), usable));
  }
}

void checkFsdp(const LaunchSettings& s) {
  if (s.text("distributed_type") == "FSDP" && s.value("fsdp_config.fsdp_cpu_ram_efficient_loading") == true &&
      s.value("fsdp_config.fsdp_sync_module_states") == false) {
    throw UsageError("fsdp_cpu_ram_efficient_loading needs fsdp_sync_module_states",
                     "set fsdp_sync_module_states: true, or turn off CPU-RAM-efficient loading");
  }
}

}  // namespace accel
