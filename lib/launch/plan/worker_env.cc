// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/worker_env.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/launch/launch_env.h"
#include "lib/launch/plan/plan_layout.h"

namespace accel::launch::plan {

namespace {

namespace E = launch_env;

void put(Env& env, const char* name, std::string value) {
  for (auto& [k, v] : env) {
    if (k == name) return void(v = std::move(value));
  }
  env.emplace_back(name, std::move(value));
}

// torchrun's worker variables: the job, the machine, the role, and this worker's ranks.
void torchrunPlace(const LaunchPlan& p, const WorkerSpec& w, Env& env) {
  const RoleShare role = roleShareOf(p.layout, std::max(0, p.machine_rank));
  env.insert(env.end(), {
                            {E::kWorldSize, std::to_string(p.world_size)},
                            {E::kLocalWorldSize, std::to_string(p.workers.size())},
                            {E::kGroupRank, std::to_string(p.machine_rank)},
                            {E::kGroupWorldSize, std::to_string(p.num_machines)},
                            {E::kRoleWorldSize, std::to_string(role.size)},
                            {E::kRoleName, p.role},
                            {E::kMasterAddr, p.master_addr},
                            {E::kMasterPort, std::to_string(p.master_port)},
                            {E::kMaxRestarts, std::to_string(p.max_restarts)},
                            {E::kRunId, p.run_id},
                            {E::kRank, std::to_string(w.rank)},
                            {E::kLocalRank, std::to_string(p.virtual_local_rank ? 0 : w.local_rank)},
                            {E::kRoleRank, std::to_string(w.role_rank)},
                        });
}

// DeepSpeed's launch.py: LOCAL_RANK is the global rank modulo the machine's processes.
void deepSpeedPlace(const LaunchPlan& p, const WorkerSpec& w, Env& env) {
  const int local = static_cast<int>(p.workers.size());
  env.insert(env.end(), {
                            {E::kCudaVisibleDevices, p.device_ids},
                            {E::kMasterAddr, p.master_addr},
                            {E::kMasterPort, std::to_string(p.master_port)},
                            {E::kWorldSize, std::to_string(p.world_size)},
                            {E::kCrossRank, std::to_string(p.machine_rank)},
                            {E::kCrossSize, std::to_string(p.num_machines)},
                            {E::kLocalSize, std::to_string(local)},
                            {E::kRank, std::to_string(w.rank)},
                            {E::kLocalRank, std::to_string(local > 0 ? w.rank % local : 0)},
                        });
}

Env placeOf(const LaunchPlan& p, const WorkerSpec& w) {
  Env env;
  if (p.deepspeed_env) {
    deepSpeedPlace(p, w, env);
  } else if (p.torchrun_env) {
    torchrunPlace(p, w, env);
  } else if (p.world_size > 1 || p.num_machines > 1) {  // as the simple launcher: mpirun's ranks meet here
    env.insert(env.end(), {{E::kMasterAddr, p.master_addr}, {E::kMasterPort, std::to_string(p.master_port)}});
  }
  env.insert(env.end(), {{E::kAccelRunId, p.run_id}, {E::kStoreToken, p.token}});
  if (p.torchrun_env || p.max_restarts > 0) env.emplace_back(E::kRestartCount, std::to_string(p.restarts));
  if (!p.label_host.empty()) env.emplace_back(E::kMachineName, p.label_host);
  for (const auto& name : p.socket_variables) env.emplace_back(name, p.socket_interface);
  return env;
}

// Every variable accel sets itself.
Env ours(const LaunchPlan& p, const WorkerSpec& w) {
  Env env = placeOf(p, w);
  for (const auto& [name, value] : p.exports) put(env, name.c_str(), value);
  for (const auto& [name, value] : w.own_env) put(env, name.c_str(), value);
  if (!w.cuda_visible_device.empty()) put(env, E::kCudaVisibleDevices, w.cuda_visible_device);
  return env;
}

}  // namespace

std::string torchDumpPrefix(const std::string& hook_folder) { return hook_folder + "/torch_dump_rank_"; }

std::string flightSocket(const std::string& hook_folder, int local_rank) {
  return fmt::format("{}/rank{}.sock", hook_folder, local_rank);
}

Env workerEnvironment(const LaunchPlan& p, const WorkerSpec& w, const SpawnContext& c) {
  Env env = ours(p, w);
  for (const auto& assignment : p.user_env) {
    const auto eq = assignment.find('=');
    const std::string name = assignment.substr(0, eq);
    const bool ours = std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
    if (!ours) env.emplace_back(name, assignment.substr(eq + 1));
  }
  std::sort(env.begin(), env.end());
  if (!c.error_file.empty()) env.emplace_back(E::kErrorFile, c.error_file);
  if (!c.launcher_socket.empty()) env.emplace_back(E::kLauncherSocket, c.launcher_socket);
  if (c.progress_fd >= 0) env.emplace_back(E::kProgressFd, std::to_string(c.progress_fd));
  if (c.flight_fd >= 0) env.emplace_back(E::kFlightFd, std::to_string(c.flight_fd));
  if (p.virtual_local_rank && (c.progress_fd >= 0 || c.flight_fd >= 0)) {
    env.emplace_back(E::kLocalSlot, std::to_string(w.local_rank));
  }
  if (p.torch_flight && !c.flight_hook.empty()) {
    std::string path = p.python_path;  // a user's --env PYTHONPATH is in `env` by now, and wins
    for (const auto& [k, v] : env) {
      if (k == E::kPythonPath) path = v;
    }
    put(env, E::kPythonPath, c.flight_hook + (path.empty() ? "" : ":" + path));
    env.emplace_back(E::kFrSocket, flightSocket(c.flight_hook, w.local_rank));
    auto unset = [&env](const char* name) {
      return std::none_of(env.begin(), env.end(), [name](const auto& kv) { return kv.first == name; });
    };
    if (p.torch_dump_file && unset(E::kTorchFrDumpTempFile) && unset(E::kTorchNcclDebugInfoTempFile)) {
      env.emplace_back(E::kTorchFrDumpTempFile, torchDumpPrefix(c.flight_hook));
    }
    if (p.torch_dump_pipe && unset(E::kTorchNcclDebugInfoPipeFile)) {
      env.emplace_back(E::kTorchNcclDebugInfoPipeFile, c.flight_hook + "/torch_pipe_rank_");
    }
  }
  return env;
}

std::vector<std::string> ignoredUserEnv(const LaunchPlan& p, const std::vector<std::string>& assignments) {
  std::vector<std::string> notes;
  if (p.workers.empty()) return notes;
  const Env set = ours(p, p.workers.front());
  for (const auto& assignment : assignments) {
    const std::string name = assignment.substr(0, assignment.find('='));
    const bool taken = std::any_of(set.begin(), set.end(), [&](const auto& kv) { return kv.first == name; });
    if (taken) notes.push_back(fmt::format("--env {}: ignored, accel sets {} itself", assignment, name));
  }
  return notes;
}

}  // namespace accel::launch::plan
