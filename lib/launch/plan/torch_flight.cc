// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/torch_flight.h"

#include <algorithm>

#include "lib/launch/launch_env.h"

namespace accel::launch::plan {

bool runsPython(const std::vector<std::string>& program) {
  if (program.empty()) return false;
  const std::string& first = program.front();
  const std::string name = first.substr(first.rfind('/') == std::string::npos ? 0 : first.rfind('/') + 1);
  return name.rfind("python", 0) == 0;
}

namespace {

// Whether the user set `name`: in the launcher's environment, or for the workers (--env).
bool userSet(const LaunchPlan& p, const facts::Machine& f, const char* name) {
  const std::string prefix = std::string(name) + "=";
  return !f.variable(name).empty() || std::any_of(p.user_env.begin(), p.user_env.end(),
                                                  [&](const std::string& kv) { return kv.rfind(prefix, 0) == 0; });
}

}  // namespace

void planTorchFlight(LaunchPlan& p, const facts::Machine& f, const std::vector<std::string>& program) {
  namespace E = launch_env;
  // The rings are sized by the launcher's value: a worker's own (--env) would map past its ring.
  p.exports.emplace_back(E::kFlightEntries.name(), std::to_string(std::max(p.flight_entries, 0)));
  if (p.flight_entries <= 0) return;  // off: libaccel_runtime's workers record nothing either
  if (!runsPython(program)) return;
  p.torch_flight = true;
  const auto exported =
      std::find_if(p.exports.begin(), p.exports.end(), [](const auto& kv) { return kv.first == E::kPythonPath; });
  p.python_path = exported != p.exports.end() ? exported->second : f.variable(E::kPythonPath);
  if (!userSet(p, f, E::kTorchFrBufferSize) && !userSet(p, f, E::kTorchNcclTraceBufferSize)) {
    p.exports.emplace_back(E::kTorchFrBufferSize, std::to_string(p.flight_entries));
  }
  if (!p.gpus) return;
  p.torch_nccl = true;
  if (!userSet(p, f, E::kTorchNcclDumpOnTimeout)) p.exports.emplace_back(E::kTorchNcclDumpOnTimeout, "1");
  p.torch_dump_file = !userSet(p, f, E::kTorchFrDumpTempFile) && !userSet(p, f, E::kTorchNcclDebugInfoTempFile);
  p.torch_dump_pipe = !userSet(p, f, E::kTorchNcclDebugInfoPipeFile);
}

}  // namespace accel::launch::plan
