// SPDX-License-Identifier: Apache-2.0
#include "lib/config/validate.h"

#include <set>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/config/parallelism_sizes.h"

namespace accel {

namespace {

std::optional<long long> integer(const Config& c, const char* key) {
  nlohmann::json v = c.resolved(key);
  if (v.is_number_integer()) return v.get<long long>();
  return std::nullopt;
}

void checkGpuIds(const Config& c, std::vector<Diagnostic>& out) {
  const nlohmann::json* ids = c.find("gpu_ids");
  if (!ids || !ids->is_string()) return;
  std::string problem;
  auto parsed = parseGpuIds(ids->get<std::string>(), problem);
  if (!parsed) {
    out.push_back({c.where("gpu_ids"), problem, "use `all` or GPU indices such as 0,1,2,3"});
    return;
  }
  auto processes = integer(c, "num_processes");
  auto machines = integer(c, "num_machines").value_or(1);
  if (parsed->empty() || !processes || c.resolved("use_cpu") == true || machines < 1) return;
  long long per_machine = *processes / machines;
  if (static_cast<long long>(parsed->size()) < per_machine) {
    out.push_back({c.where("gpu_ids"),
                   fmt::format("gpu_ids lists {} GPU(s) but num_processes ({}) asks for {} "
                               "process(es) per machine",
                               parsed->size(), c.lineOf("num_processes"), per_machine),
                   "list one GPU per process on this machine, or lower num_processes"});
  }
}

}  // namespace

std::optional<std::vector<int>> parseGpuIds(const std::string& text, std::string& problem) {
  std::string t = trim(text);
  if (t == "all") return std::vector<int>{};
  std::vector<int> ids;
  std::set<int> seen;
  for (const auto& part : split(t, ',')) {
    auto id = parseInt(trim(part));
    if (!id || *id < 0 || *id > 1023) {
      problem = fmt::format("gpu_ids '{}' is not `all` or a comma-separated list of GPU indices", text);
      return std::nullopt;
    }
    if (!seen.insert(static_cast<int>(*id)).second) {
      problem = fmt::format("gpu_ids '{}' lists GPU {} twice", text, *id);
      return std::nullopt;
    }
    ids.push_back(static_cast<int>(*id));
  }
  return ids;
}

std::vector<Diagnostic> checkConsistency(const Config& c) {
  std::vector<Diagnostic> out;
  const auto processes = integer(c, "num_processes");
  const long long machines = integer(c, "num_machines").value_or(1);
  const long long rank = integer(c, "machine_rank").value_or(0);
  const nlohmann::json type = c.resolved("distributed_type");

  if (type == "MULTI_GPU" && processes == 1 && machines == 1) {
    out.push_back({c.where("num_processes"),
                   fmt::format("distributed_type MULTI_GPU ({}) needs at least 2 processes on "
                               "one machine, but num_processes is 1",
                               c.lineOf("distributed_type")),
                   "use distributed_type: 'NO' for a single GPU, or set num_processes to the "
                   "number of GPUs"});
  }
  if (processes && machines > 0 && *processes % machines != 0) {
    out.push_back({c.where("num_processes"),
                   fmt::format("num_processes {} is not divisible by num_machines {} ({}); "
                               "num_processes counts processes across all machines",
                               *processes, machines, c.lineOf("num_machines")),
                   fmt::format("set num_processes to a multiple of {}, e.g. {}", machines,
                               machines * std::max(1LL, *processes / machines))});
  }
  if (rank >= machines) {
    out.push_back({c.where("machine_rank"),
                   fmt::format("machine_rank {} must be less than num_machines {} ({})", rank, machines,
                               c.lineOf("num_machines")),
                   fmt::format("machine ranks run from 0 to {}", machines - 1)});
  }
  if (machines > 1) {
    const nlohmann::json* ip = c.find("main_process_ip");
    if (!ip || (ip->is_string() && trim(ip->get<std::string>()).empty())) {
      out.push_back({c.where("num_machines"),
                     fmt::format("num_machines is {} but main_process_ip is not set", machines),
                     "set main_process_ip to the address of the machine with machine_rank 0"});
    }
  }
  checkGpuIds(c, out);
  return out;
}

std::vector<Diagnostic> checkParallelismSizes(const Config& c) {
  const nlohmann::json* section = c.find("parallelism_config");
  const auto processes = integer(c, "num_processes");
  // As a launch: a non-empty section turns the ParallelismConfig on for FSDP.
  if (!section || !section->is_object() || section->empty() || c.resolved("distributed_type") != "FSDP" || !processes) {
    return {};
  }
  const auto sizes = parallelismSizes([&](const std::string& key) {
    return std::pair{integer(c, key.c_str()).value_or(1), c.lineOf(key)};
  });
  const nlohmann::json backend = c.resolved(kSpBackendKey);
  auto problem =
      parallelismSizeProblem(sizes, backend.is_string() ? backend.get<std::string>() : "deepspeed", *processes);
  if (!problem) return {};
  problem->where = c.where("parallelism_config");
  problem->message += fmt::format(" (num_processes, {})", c.lineOf("num_processes"));
  return {*problem};
}

}  // namespace accel
