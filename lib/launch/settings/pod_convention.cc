// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/pod_convention.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::settings {

namespace {

using Env = std::map<std::string, std::string>;
namespace E = launch_env;

const std::string kNnodes = torchrunVariable("nnodes"), kNprocPerNode = torchrunVariable("nproc_per_node"),
                  kNodeRank = torchrunVariable("node_rank"), kMasterAddr = torchrunVariable("master_addr"),
                  kMasterPort = torchrunVariable("master_port"), kRdzvEndpoint = torchrunVariable("rdzv_endpoint"),
                  kRdzvBackend = torchrunVariable("rdzv_backend"), kRdzvId = torchrunVariable("rdzv_id"),
                  kMaxRestarts = torchrunVariable("max_restarts");

bool has(const Env& env, const std::string& name) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty();
}

// Those of `names` that are set, as "NAME=value".
std::vector<std::string> present(const Env& env, std::initializer_list<std::string> names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    if (has(env, name)) out.push_back(fmt::format("{}={}", name, env.at(name)));
  }
  return out;
}

long long integer(const Env& env, const std::string& name, long long min, const std::string& convention) {
  const std::string& text = env.at(name);
  auto v = parseInt(text);
  if (!v || *v < min) {
    throw UsageError(
        fmt::format("{}='{}' is not an integer of at least {} ({} sets it)", name, text, min, convention),
        fmt::format("check the pod's environment; {}=0 turns the {} convention off", env::kK8s.name(), convention));
  }
  return *v;
}

PodConvention pyTorchJob(const Env& env) {
  PodConvention c{
      "PyTorchJob v1",
      present(env, {E::kMasterAddr, E::kMasterPort, E::kRank, E::kWorldSize, kNnodes, kNprocPerNode, kNodeRank}),
      {},
      {E::kRank, E::kWorldSize}};
  auto put = [&](const char* key, nlohmann::json value, const char* variable) {
    c.keys[key] = Sourced{std::move(value), {Source::Pod, fmt::format("{} {}", c.name, variable)}, false};
  };
  const long long rank = integer(env, E::kRank, 0, c.name), world = integer(env, E::kWorldSize, 1, c.name);
  if (rank >= world) {
    throw UsageError(
        fmt::format("{}={} is not below {}={} ({} sets both)", E::kRank, rank, E::kWorldSize, world, c.name),
        fmt::format("check the pod's environment; {}=0 turns the convention off", env::kK8s.name()));
  }
  put("machine_rank", rank, E::kRank);
  put("main_process_ip", env.at(E::kMasterAddr), E::kMasterAddr);
  const long long port = integer(env, E::kMasterPort, 1, c.name);
  if (port > 65535) {
    throw UsageError(fmt::format("{}='{}' is not a port ({} sets it)", E::kMasterPort, port, c.name));
  }
  put("main_process_port", port, E::kMasterPort);
  if (!has(env, kNnodes)) put("num_machines", world, E::kWorldSize);
  return c;
}

}  // namespace

std::optional<PodConvention> detectPodConvention(const Env& vars) {
  if (env::kK8s.in(vars) == "0") return std::nullopt;
  // Every pod has KUBERNETES_SERVICE_HOST; an sbatch script or a shell may export the other four.
  if (env::kKubernetesServiceHost.setIn(vars) && !env::kSlurmJobId.setIn(vars) && has(vars, E::kMasterAddr) &&
      has(vars, E::kMasterPort) && has(vars, E::kRank) && has(vars, E::kWorldSize) && !has(vars, E::kLocalRank)) {
    return pyTorchJob(vars);
  }
  if (has(vars, kRdzvEndpoint) && has(vars, kNnodes) && !has(vars, kNodeRank)) {
    return PodConvention{"PyTorchJob v1 with elasticPolicy",
                         present(vars, {kNnodes, kRdzvBackend, kRdzvEndpoint, kRdzvId, kNprocPerNode, kMaxRestarts}),
                         {},
                         {}};
  }
  if (has(vars, kNnodes) && has(vars, kNodeRank) && has(vars, kMasterAddr) && has(vars, kMasterPort)) {
    return PodConvention{
        "Kubeflow Trainer v2", present(vars, {kNnodes, kNprocPerNode, kNodeRank, kMasterAddr, kMasterPort}), {}, {}};
  }
  return std::nullopt;
}

}  // namespace accel::launch::settings
