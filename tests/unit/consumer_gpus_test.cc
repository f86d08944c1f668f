// SPDX-License-Identifier: Apache-2.0
// The driver comparison of Accelerate's RTX 40-series check (lib/launch/plan/consumer_gpus.h):
// numbers component by component, as packaging.version compares them.
#include <catch2/catch.hpp>

#include "lib/launch/plan/consumer_gpus.h"

using accel::launch::plan::driverOlder;

TEST_CASE("consumer GPUs: driver versions compare as numbers", "[launch][gpu]") {
  CHECK(driverOlder("535.104.05", "550.40.07"));
  CHECK(driverOlder("550.40.6", "550.40.07"));
  CHECK(driverOlder("550.40", "550.40.07"));
  CHECK_FALSE(driverOlder("550.40.07", "550.40.07"));
  CHECK_FALSE(driverOlder("550.100.01", "550.40.07"));  // 100 > 40, not "1" < "4"
  CHECK_FALSE(driverOlder("560.35.03", "550.40.07"));
  CHECK_FALSE(driverOlder("", "550.40.07"));  // unknown: no workaround
  CHECK_FALSE(driverOlder("550.x", "550.40.07"));
}
