// SPDX-License-Identifier: Apache-2.0
// Dynamic loss scaling with torch.amp.GradScaler's defaults and algorithm: scale the loss,
// unscale the gradients with a fused inf/NaN check, agree on "found inf" across all ranks so
// every rank skips the same steps, back off on overflow, grow after `growth_interval` clean
// steps. Not thread-safe; one per training loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel {

class Backend;

struct LossScalerOptions {
  float init_scale = 65536.0f;  // 2^16
  float growth_factor = 2.0f;
  float backoff_factor = 0.5f;
  int growth_interval = 2000;
  bool enabled = true;
};

// Multiplies `grads` by `inv_scale` (unless it is 1) and reports whether any element is inf or
// NaN, in one pass. Pure; thread-safe.
bool unscaleAndCheck(float* grads, size_t n, float inv_scale);

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {});

  bool enabled() const { return options_.enabled; }
  float scale() const { return options_.enabled ? scale_ : 1.0f; }
  float scaleLoss(float loss) const { return loss * scale(); }
  // 1 / scale computed in double and rounded to float, as GradScaler does.
  float inverseScale() const;
  // Unscales one gradient buffer, remembering whether it held inf/NaN. Call for every gradient
  // buffer of the step, then step().
  void unscale(float* grads, size_t n);
  // For gradients unscaled elsewhere (cuda::unscaleAndCheck on device memory): whether they held
  // inf/NaN, counted as unscale() would.
  void recordOverflow(bool found) { found_inf_ |= found; }
  // Agrees on overflow across `group` (an all-reduce of one flag; nullptr for one process),
  // updates the scale and returns true when the optimizer step should be applied.
  bool step(Backend* group);

  int growthTracker() const { return tracker_; }
  // scale, tracker and options, for checkpoints.
  std::vector<uint8_t> state() const;
  void loadState(const std::vector<uint8_t>& state);  // throws Error on a malformed state

 private:
  LossScalerOptions options_;
  float scale_;
  int tracker_ = 0;
  bool found_inf_ = false;
};

}  // namespace accel
