// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/launch_checks.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/parallelism_sizes.h"
#include "lib/config/validate.h"

namespace accel::launch::plan {

// The store serves at most 2^20 ranks (kMaxWorldSize in runtime/store/tcp_store_protocol.h) and
// one launcher supervises at most 4096 workers: larger counts are typos, refused before a plan of
// that size is built (or a count is narrowed to int).
namespace {

constexpr long long kMaxWorldSize = 1 << 20;
constexpr long long kMaxLocalWorkers = 4096;

}  // namespace

void checkSizes(const settings::LaunchSettings& s) {
  const settings::Placement& p = s.placement;
  const long long processes = p.num_processes.value, machines = p.num_machines.value;
  auto atMost = [](const char* key, const settings::Setting<long long>& setting, const char* hint) {
    if (setting.value <= kMaxWorldSize) return;
    throw UsageError(fmt::format("{} {} ({}) is more than accel can launch ({} at most)", key, setting.value,
                                 setting.origin.text(), kMaxWorldSize),
                     hint);
  };
  atMost("num_machines", p.num_machines, "");
  atMost("num_processes", p.num_processes, "num_processes counts processes across all machines");
  const long long local = p.nproc_per_node.value;
  if (local > kMaxLocalWorkers) {
    throw UsageError(
        fmt::format("num_processes {} ({}) over {} machine(s) is {} workers on this machine; accel starts at "
                    "most {} on one machine",
                    processes, p.num_processes.origin.text(), machines, local, kMaxLocalWorkers),
        "lower --num_processes, or spread the processes over more machines with --num_machines");
  }
}

void checkCounts(const settings::LaunchSettings& s, const facts::Machine& facts) {
  const settings::Placement& p = s.placement;
  const long long processes = p.num_processes.value, machines = p.num_machines.value;
  const long long per_machine = p.nproc_per_node.value;
  if (processes < 1) throw UsageError(fmt::format("num_processes must be at least 1, got {}", processes));
  if (machines < 1) throw UsageError(fmt::format("num_machines must be at least 1, got {}", machines));
  if (processes < machines) {
    throw UsageError(
        fmt::format("num_processes {} ({}) is fewer than num_machines {} ({}): every machine runs at least "
                    "one process",
                    processes, p.num_processes.origin.text(), machines, p.num_machines.origin.text()),
        "num_processes counts processes across all machines");
  }
  if (per_machine < 1) throw UsageError(fmt::format("nproc_per_node must be at least 1, got {}", per_machine));
  const long long rank = p.machine_rank.value;
  if ((rank < 0 && !p.join_order) || rank >= machines) {
    throw UsageError(
        fmt::format("machine_rank {} ({}) must be from 0 to {}", rank, p.machine_rank.origin.text(), machines - 1));
  }
  const auto& type = s.paradigm.distributed_type;
  if (type.value == "MULTI_GPU" && type.origin.source == settings::Source::CommandLine && processes < 2) {
    throw UsageError("--multi_gpu needs at least 2 processes, got num_processes " + std::to_string(processes));
  }
  // Without any GPU, Accelerate launches every paradigm anyway and its workers use the CPU
  // (paradigm.h notes it); with GPUs, a plan that cannot give each process its own is refused
  // here rather than in every worker.
  if (s.paradigm.use_cpu.value || facts.physical_gpus == 0) return;
  std::string problem;
  auto ids = parseGpuIds(s.keys.text("gpu_ids"), problem);
  if (!ids) throw UsageError(problem, "use `all` or GPU indices such as 0,1");
  for (int id : *ids) {
    if (id >= facts.physical_gpus) {
      throw UsageError(fmt::format("gpu_ids ({}) names GPU {}, but this machine has {} GPU(s)",
                                   s.keys.origin("gpu_ids").text(), id, facts.physical_gpus),
                       "run `accel env` to list the GPUs");
    }
  }
  int usable = ids->empty() ? facts.visible_gpus : static_cast<int>(ids->size());
  if (usable > 0 && per_machine > usable && !s.torchrun.grammar.value) {  // torchrun lets processes share a GPU
    throw UsageError(
        fmt::format("{} processes per machine but only {} GPU(s) {}: one process per GPU", per_machine, usable,
                    ids->empty() ? "visible" : "in gpu_ids"),
        fmt::format("pass --num_processes {} (per machine: {}), or --cpu for CPU workers", usable * machines, usable));
  }
}

void checkMembership(const settings::LaunchSettings& s) {
  const settings::Placement& p = s.placement;
  if (p.min_machines.value >= p.num_machines.value) return;
  const bool mpirun = s.hosts.how == settings::Hosts::How::Mpi || s.keys.has("mpirun_config.mpirun_hostfile");
  const char* starter = mpirun                                      ? "mpirun starts"
                        : s.hosts.how == settings::Hosts::How::Ssh  ? "a hostfile launch starts"
                        : s.hosts.how == settings::Hosts::How::Srun ? "srun (deepspeed_multinode_launcher slurm) starts"
                                                                    : nullptr;
  if (!starter) return;
  throw UsageError(
      fmt::format("{} {}:{} (machines that come and go): {} every machine at once and ends them together, so "
                  "machines cannot come and go nor wait as spares",
                  p.num_machines.origin.text(), p.min_machines.value, p.num_machines.value, starter),
      fmt::format(
          "give --nnodes {} for this launch; for machines that come and go run `accel launch --nnodes {}:{} "
          "--rdzv_backend c10d --rdzv_endpoint HOST:PORT` on each machine (or etcd and its address; under SLURM: "
          "srun --nodes={} accel launch …)",
          p.num_machines.value, p.min_machines.value, p.num_machines.value, p.num_machines.value));
}

void checkFsdp(const settings::LaunchSettings& s) {
  if (s.paradigm.distributed_type.value == "FSDP" &&
      s.keys.value("fsdp_config.fsdp_cpu_ram_efficient_loading") == true &&
      s.keys.value("fsdp_config.fsdp_sync_module_states") == false) {
    throw UsageError("fsdp_cpu_ram_efficient_loading needs fsdp_sync_module_states",
                     "set fsdp_sync_module_states: true, or turn off CPU-RAM-efficient loading");
  }
}

void checkParallelism(const settings::LaunchSettings& s, long long world_size, std::vector<std::string>& notes) {
  if (!s.paradigm.use_parallelism_config.value) return;
  const auto sizes = parallelismSizes([&](const std::string& key) {
    return std::pair{s.keys.integer(key), s.keys.origin(key).text()};
  });
  auto problem = parallelismSizeProblem(sizes, s.keys.text(kSpBackendKey), world_size);
  if (!problem) return;
  if (s.dry_run) throw UsageError(problem->message, problem->hint);
  notes.push_back(
      fmt::format("warning: {} (a script that builds its own ParallelismConfig replaces the launch's; "
                  "--dry_run refuses this; {})",
                  problem->message, problem->hint));
}

}  // namespace accel::launch::plan
