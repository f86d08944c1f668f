// SPDX-License-Identifier: Apache-2.0
// The runtime's settings from the launcher's environment (runtime/state/runtime_settings.h),
// through an injected reader: defaults, every variable, and a bad timeout named.
#include <catch2/catch.hpp>

#include <map>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "runtime/state/runtime_settings.h"

using namespace accel;

namespace {

RuntimeSettings from(const std::map<std::string, std::string>& env) {
  return readRuntimeSettings([&](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

}  // namespace

TEST_CASE("runtime settings: defaults with nothing set", "[unit][state]") {
  const RuntimeSettings s = from({});
  CHECK(s.debug == DebugLevel::Off);
  CHECK(s.collective_timeout == defaults::kCollectiveTimeout);
  CHECK(s.shm);
  CHECK(s.gloo_iface.empty());
  CHECK(s.host_id.empty());
  CHECK(s.run_id.empty());
}

TEST_CASE("runtime settings: every variable", "[unit][state]") {
  const RuntimeSettings s = from({{"ACCEL_DEBUG", "info"},
                                  {"ACCEL_COLLECTIVE_TIMEOUT", "2.5"},
                                  {"GLOO_SOCKET_IFNAME", "eth1"},
                                  {"ACCEL_SHM", "0"},
                                  {"ACCEL_HOST_ID", "a"},
                                  {"ACCEL_MACHINE", "gpu07"},
                                  {"TORCHELASTIC_RUN_ID", "r1"}});
  CHECK(s.debug == DebugLevel::Info);
  CHECK(s.collective_timeout == std::chrono::milliseconds(2500));
  CHECK(s.gloo_iface == "eth1");
  CHECK_FALSE(s.shm);
  CHECK(s.host_id == "a");
  CHECK(s.machine_name == "gpu07");
  CHECK(s.run_id == "r1");
  CHECK(from({{"ACCEL_RUN_ID", "mine"}, {"TORCHELASTIC_RUN_ID", "r1"}}).run_id == "mine");
}

TEST_CASE("runtime settings: debug levels as Accelerate and ACCEL_DEBUG spell them", "[unit][state]") {
  CHECK(from({{"ACCELERATE_DEBUG_MODE", "True"}}).debug == DebugLevel::Detail);
  CHECK(from({{"ACCEL_DEBUG", "DETAIL"}}).debug == DebugLevel::Detail);
  CHECK(from({{"ACCEL_DEBUG", "off"}}).debug == DebugLevel::Off);
  CHECK(from({{"ACCEL_DEBUG", "0"}}).debug == DebugLevel::Off);
  CHECK(from({{"ACCELERATE_DEBUG_MODE", "false"}}).debug == DebugLevel::Off);
}

TEST_CASE("runtime settings: a timeout that is no number of seconds above 0 is named", "[unit][state]") {
  for (const char* bad : {"0", "-1", "ten", "1e9", "nan"}) {
    INFO(bad);
    CHECK_THROWS_WITH(
        from({{"ACCEL_COLLECTIVE_TIMEOUT", bad}}),
        Catch::Contains(std::string("ACCEL_COLLECTIVE_TIMEOUT='") + bad + "' is not a number of seconds above 0"));
  }
}
