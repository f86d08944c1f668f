// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/pod_convention.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

using Env = std::map<std::string, std::string>;

bool has(const Env& env, const char* name) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty();
}

// Those of `names` that are set, as "NAME=value".
std::vector<std::string> present(const Env& env, std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  for (const char* name : names) {
    if (has(env, name)) out.push_back(fmt::format("{}={}", name, env.at(name)));
  }
  return out;
}

long long integer(const Env& env, const char* name, long long min, const std::string& convention) {
  const std::string& text = env.at(name);
  auto v = parseInt(text);
  if (!v || *v < min) {
    throw UsageError(fmt::format("{}='{}' is not an integer of at least {} ({} sets it)", name, text, min, convention),
                     fmt::format("check the pod's environment; ACCEL_K8S=0 turns the {} convention off", convention));
  }
  return *v;
}

PodConvention pyTorchJob(const Env& env) {
  PodConvention c{"PyTorchJob v1",
                  present(env, {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "PET_NNODES", "PET_NPROC_PER_NODE",
                                "PET_NODE_RANK"}),
                  {},
                  {"RANK", "WORLD_SIZE"}};
  auto put = [&](const char* key, nlohmann::json value, const char* variable) {
    c.keys[key] = Sourced{std::move(value), fmt::format("{} {}", c.name, variable), false};
  };
  const long long rank = integer(env, "RANK", 0, c.name), world = integer(env, "WORLD_SIZE", 1, c.name);
  if (rank >= world) {
    throw UsageError(fmt::format("RANK={} is not below WORLD_SIZE={} ({} sets both)", rank, world, c.name),
                     "check the pod's environment; ACCEL_K8S=0 turns the convention off");
  }
  put("machine_rank", rank, "RANK");
  put("main_process_ip", env.at("MASTER_ADDR"), "MASTER_ADDR");
  const long long port = integer(env, "MASTER_PORT", 1, c.name);
  if (port > 65535) throw UsageError(fmt::format("MASTER_PORT='{}' is not a port ({} sets it)", port, c.name));
  put("main_process_port", port, "MASTER_PORT");
  if (!has(env, "PET_NNODES")) put("num_machines", world, "WORLD_SIZE");
  return c;
}

}  // namespace

std::optional<PodConvention> detectPodConvention(const Env& env) {
  if (auto it = env.find("ACCEL_K8S"); it != env.end() && it->second == "0") return std::nullopt;
  // Every pod has KUBERNETES_SERVICE_HOST; an sbatch script or a shell may export the other four.
  if (has(env, "KUBERNETES_SERVICE_HOST") && !has(env, "SLURM_JOB_ID") && has(env, "MASTER_ADDR") &&
      has(env, "MASTER_PORT") && has(env, "RANK") && has(env, "WORLD_SIZE") && !has(env, "LOCAL_RANK")) {
    return pyTorchJob(env);
  }
  if (has(env, "PET_RDZV_ENDPOINT") && has(env, "PET_NNODES") && !has(env, "PET_NODE_RANK")) {
    return PodConvention{"PyTorchJob v1 with elasticPolicy",
                         present(env, {"PET_NNODES", "PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_RDZV_ID",
                                       "PET_NPROC_PER_NODE", "PET_MAX_RESTARTS"}),
                         {},
                         {}};
  }
  if (has(env, "PET_NNODES") && has(env, "PET_NODE_RANK") && has(env, "PET_MASTER_ADDR") &&
      has(env, "PET_MASTER_PORT")) {
    return PodConvention{
        "Kubeflow Trainer v2",
        present(env, {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}),
        {},
        {}};
  }
  return std::nullopt;
}

}  // namespace accel
