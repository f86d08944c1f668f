// SPDX-License-Identifier: Apache-2.0
#include "runtime/amp/loss_scaler.h"

#include <cmath>
#include <cstring>

#include "lib/common/error.h"
#include "runtime/comm/backend.h"

namespace accel {

// An all-ones exponent is inf or NaN; OR-ing integer flags keeps the loop vectorisable.
bool unscaleAndCheck(float* grads, size_t n, float inv_scale) {
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    float v = inv_scale == 1.0f ? grads[i] : grads[i] * inv_scale;
    grads[i] = v;
    uint32_t u;
    std::memcpy(&u, &v, 4);
    bad |= (u & 0x7f800000u) == 0x7f800000u;
  }
  return bad != 0;
}

LossScaler::LossScaler(LossScalerOptions options) : options_(options), scale_(options.init_scale) {}

float LossScaler::inverseScale() const { return static_cast<float>(1.0 / static_cast<double>(scale())); }

void LossScaler::unscale(float* grads, size_t n) {
  if (!options_.enabled) return;
  found_inf_ |= unscaleAndCheck(grads, n, inverseScale());
}

bool LossScaler::step(Backend* group) {
  if (!options_.enabled) return true;
  float found = found_inf_ ? 1.0f : 0.0f;
  if (group && group->size() > 1) group->allReduce(cpuTensor(&found, 1), ReduceOp::Max)->wait();
  found_inf_ = false;
  if (found != 0.0f) {
    scale_ *= options_.backoff_factor;
    tracker_ = 0;
    return false;
  }
  if (++tracker_ == options_.growth_interval) {
    double candidate = static_cast<double>(scale_) * options_.growth_factor;
    if (std::isfinite(static_cast<float>(candidate))) scale_ = static_cast<float>(candidate);
    tracker_ = 0;
  }
  return true;
}

std::vector<uint8_t> LossScaler::state() const {
  std::vector<uint8_t> out(sizeof scale_ + sizeof tracker_ + sizeof options_);
  std::memcpy(out.data(), &scale_, sizeof scale_);
  std::memcpy(out.data() + sizeof scale_, &tracker_, sizeof tracker_);
  std::memcpy(out.data() + sizeof scale_ + sizeof tracker_, &options_, sizeof options_);
  return out;
}

void LossScaler::loadState(const std::vector<uint8_t>& state) {
  if (state.size() != sizeof scale_ + sizeof tracker_ + sizeof options_) {
    throw Error("loss scaler state has " + std::to_string(state.size()) + " bytes; this accel expects " +
                std::to_string(sizeof scale_ + sizeof tracker_ + sizeof options_));
  }
  std::memcpy(&scale_, state.data(), sizeof scale_);
  std::memcpy(&tracker_, state.data() + sizeof scale_, sizeof tracker_);
  std::memcpy(&options_, state.data() + sizeof scale_ + sizeof tracker_, sizeof options_);
}

}  // namespace accel
