// SPDX-License-Identifier: Apache-2.0
#include "runtime/state/runtime_settings.h"

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

DebugLevel debugLevel(const EnvReader& get) {
  const std::string mode = toLower(get(launch_env::kAccelerateDebugMode).value_or(""));
  const std::string level = toLower(get(launch_env::kAccelDebug).value_or(""));
  if (mode == "true" || level == "detail") return DebugLevel::Detail;
  if (!level.empty() && level != "off" && level != "0") return DebugLevel::Info;
  return DebugLevel::Off;
}

std::chrono::milliseconds collectiveTimeout(const EnvReader& get) {
  const std::string text = get(launch_env::kCollectiveTimeout).value_or("");
  if (text.empty()) return defaults::kCollectiveTimeout;
  const auto seconds = parsePositiveSeconds(text);
  if (!seconds) {
    throw Error(
        fmt::format("{}='{}' is not a number of seconds above 0", launch_env::kCollectiveTimeout, text),
        fmt::format("e.g. 600, or unset it for the default ({:g} s)", defaults::seconds(defaults::kCollectiveTimeout)));
  }
  return defaults::fromSeconds(*seconds);
}

}  // namespace

RuntimeSettings readRuntimeSettings(const EnvReader& get) {
  RuntimeSettings s;
  s.debug = debugLevel(get);
  s.collective_timeout = collectiveTimeout(get);
  s.gloo_iface = get(launch_env::kGlooSocketIfname).value_or("");
  s.shm = get(launch_env::kAccelShm).value_or("") != "0";
  s.host_id = get(launch_env::kAccelHostId).value_or("");
  s.machine_name = get(launch_env::kMachineName).value_or("");
  for (const char* var : {launch_env::kAccelRunId, launch_env::kRunId}) {
    if (s.run_id.empty()) s.run_id = get(var).value_or("");
  }
  return s;
}

RuntimeSettings readRuntimeSettings() { return readRuntimeSettings(processEnvReader()); }

}  // namespace accel
