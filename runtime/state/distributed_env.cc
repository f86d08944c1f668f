// SPDX-License-Identifier: Apache-2.0
#include "runtime/state/distributed_env.h"

#include <climits>
#include <cstdlib>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

using Getenv = EnvReader;

std::optional<int> number(const Getenv& get, std::initializer_list<const char*> names, const char** found = nullptr) {
  for (const char* name : names) {
    auto v = get(name);
    if (!v || v->empty()) continue;
    // Ranks, sizes and ports are ints: a larger value is out of range, never narrowed.
    if (std::string why = whyNotInteger(*v, 0, INT_MAX); !why.empty()) {
      throw Error(fmt::format("{}={}", name, why), "check the launcher's environment");
    }
    if (found) *found = name;
    return static_cast<int>(*parseInt(*v));
  }
  return std::nullopt;
}

}  // namespace

DistributedEnv readDistributedEnv(const Getenv& get) {
  namespace E = launch_env;
  DistributedEnv d;
  const char* rank_var = nullptr;
  auto rank = number(get, {E::kRank, env::kOmpiRank.name(), env::kPmiRank.name(), env::kMv2Rank.name()}, &rank_var);
  auto world = number(get, {E::kWorldSize, env::kOmpiSize.name(), env::kPmiSize.name(), env::kMv2Size.name()});
  if (rank && world) {
    d.rank = *rank;
    d.world_size = *world;
    d.local_rank =
        number(get, {E::kLocalRank, env::kOmpiLocalRank.name(), env::kMpiLocalRankId.name(), env::kMv2LocalRank.name()})
            .value_or(d.rank);
    d.local_world_size = number(get, {E::kLocalWorldSize, env::kOmpiLocalSize.name(), env::kMpiLocalNRanks.name(),
                                      env::kMv2LocalSize.name()})
                             .value_or(d.world_size);
    std::string var = rank_var;
    d.source = var == E::kRank ? "accel launch / torchrun" : startsWith(var, "OMPI") ? "Open MPI" : "MPI";
  } else {
    d.source = "single process";
  }
  if (d.world_size < 1 || d.rank < 0 || d.rank >= d.world_size) {
    throw Error(fmt::format("rank {} is outside a world of {} (from {})", d.rank, d.world_size, d.source),
                "RANK must be from 0 to WORLD_SIZE-1");
  }
  if (d.local_rank < 0 || d.local_rank >= d.local_world_size) {
    throw Error(fmt::format("local rank {} is outside a local world of {}", d.local_rank, d.local_world_size));
  }
  if (auto a = get(E::kMasterAddr); a && !a->empty()) d.master_addr = *a;
  d.master_port = number(get, {E::kMasterPort}).value_or(d.master_port);
  d.token = get(E::kStoreToken).value_or("");
  d.launcher_socket = get(E::kLauncherSocket).value_or("");
  d.use_cpu = toLower(get(E::kUseCpu).value_or("false")) == "true";
  d.mixed_precision = get(E::kMixedPrecision).value_or("no");
  d.gradient_accumulation_steps = number(get, {E::kGradientAccumulationSteps}).value_or(1);
  return d;
}

EnvReader processEnvReader() { return env::processLookup(); }

DistributedEnv readDistributedEnv() { return readDistributedEnv(processEnvReader()); }

}  // namespace accel
