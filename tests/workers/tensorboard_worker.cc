// SPDX-License-Identifier: Apache-2.0
// Logs the scalars of its command line through Trackers("all"), for TensorBoard's own reader to
// read back (tests/peers/check_tensorboard.py).
// Usage: tensorboard_worker PROJECT_DIR PROJECT_NAME STEP:TAG=VALUE...
// Consecutive arguments with the same STEP are one log() call. The run's config is
// {"lr": 0.001, "model": "mlp"}. Exit 2 on a malformed argument, 1 when the trackers fail.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "runtime/metrics/trackers.h"

namespace {

struct Scalar {
  long step;
  std::string tag;
  double value;
};

// "STEP:TAG=VALUE", numbers parsed whole (strtod rounds correctly, so the value is exact).
std::optional<Scalar> parseScalar(const std::string& arg) {
  size_t colon = arg.find(':'), equals = arg.rfind('=');
  if (colon == std::string::npos || equals == std::string::npos || equals < colon) return std::nullopt;
  std::string step = arg.substr(0, colon), value = arg.substr(equals + 1);
  char* step_end = nullptr;
  char* value_end = nullptr;
  Scalar s{std::strtol(step.c_str(), &step_end, 10), arg.substr(colon + 1, equals - colon - 1),
           std::strtod(value.c_str(), &value_end)};
  if (step.empty() || *step_end || value.empty() || *value_end) return std::nullopt;
  return s;
}

void logAll(accel::Trackers& trackers, const std::vector<Scalar>& scalars) {
  std::map<std::string, double> values;
  for (size_t i = 0; i < scalars.size(); ++i) {
    values[scalars[i].tag] = scalars[i].value;
    if (i + 1 == scalars.size() || scalars[i + 1].step != scalars[i].step) {
      trackers.log(values, scalars[i].step);
      values.clear();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tensorboard_worker PROJECT_DIR PROJECT_NAME STEP:TAG=VALUE...\n");
    return 2;
  }
  std::vector<Scalar> scalars;
  for (int i = 3; i < argc; ++i) {
    auto s = parseScalar(argv[i]);
    if (!s) {
      std::fprintf(stderr, "tensorboard_worker: not STEP:TAG=VALUE: %s\n", argv[i]);
      return 2;
    }
    scalars.push_back(*s);
  }
  try {
    accel::Trackers trackers("all", argv[1]);
    trackers.init(argv[2], {{"lr", 0.001}, {"model", std::string("mlp")}});
    logAll(trackers, scalars);
  } catch (const accel::Error& e) {
    std::fprintf(stderr, "tensorboard_worker: %s\n", e.what());
    return 1;
  }
  return 0;
}
