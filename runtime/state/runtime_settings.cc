// SPDX-License-Identifier: Apache-2.0
#include "runtime/state/runtime_settings.h"

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

DebugLevel debugLevel(const EnvReader& get) {
  const std::string mode = toLower(get(launch_env::kAccelerateDebugMode).value_or(""));
  const std::string level = toLower(env::kAccelDebug.in(get));
  if (mode == "true" || level == "detail") return DebugLevel::Detail;
  if (!level.empty() && level != "off" && level != "0") return DebugLevel::Info;
  return DebugLevel::Off;
}

// The launcher checked it too, with the same row (launch_env.h): one parse, one message.
std::chrono::milliseconds collectiveTimeout(const EnvReader& get) {
  return defaults::fromSeconds(launch_env::kCollectiveTimeout.in(get));
}

}  // namespace

RuntimeSettings readRuntimeSettings(const EnvReader& get) {
  RuntimeSettings s;
  s.debug = debugLevel(get);
  s.collective_timeout = collectiveTimeout(get);
  s.gloo_iface = get(launch_env::kGlooSocketIfname).value_or("");
  s.shm = env::kAccelShm.in(get) != "0";
  s.host_id = env::kAccelHostId.in(get);
  s.machine_name = get(launch_env::kMachineName).value_or("");
  for (const char* var : {launch_env::kAccelRunId, launch_env::kRunId}) {
    if (s.run_id.empty()) s.run_id = get(var).value_or("");
  }
  return s;
}

RuntimeSettings readRuntimeSettings() { return readRuntimeSettings(processEnvReader()); }

}  // namespace accel
