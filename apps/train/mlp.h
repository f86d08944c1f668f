// SPDX-License-Identifier: Apache-2.0
// A two-layer perceptron (64 -> hidden -> 10, ReLU, softmax cross-entropy) with a hand-written
// backward that writes each gradient into the buffer it is given and reports it ready at once,
// last layer first, as autograd would: that is what lets gradient sync overlap backward.
#pragma once

#include <functional>
#include <vector>

#include "apps/train/dataset.h"

namespace accel::train {

struct Mlp {
  int hidden;
  // Parameters in definition order: W1 (hidden x 64), b1, W2 (10 x hidden), b2.
  std::vector<std::vector<float>> params;

  // W1's gradient is registered as this many row blocks, so the first layer's gradient goes on
  // the wire block by block while the rest of it is still being accumulated (see backward).
  int w1_blocks = 1;

  Mlp(int hidden_units, uint64_t seed, int w1_row_blocks = 1);

  // Gradient slots, in registration order: W1's row blocks 0..w1_blocks-1, then b1, W2, b2.
  struct Slot {
    size_t param, offset, count;
  };
  std::vector<Slot> slots() const;
  std::vector<size_t> counts() const;  // each slot's element count

  // Mean loss over the `n` samples at `x`; logits into `logits` (n x 10). `weights` are the
  // working copies (the parameters, or their half-precision rounding).
  float forward(const std::vector<std::vector<float>>& weights, const float* x, const int32_t* y, size_t n,
                std::vector<float>& hidden_out, std::vector<float>& logits) const;
  // Adds d(loss * scale * n / divisor)/d(param) into grad(slot) and calls ready(slot) for the
  // slots in reverse registration order (b2, W2, b1, W1's last row block ... its first).
  void backward(const std::vector<std::vector<float>>& weights, const float* x, const int32_t* y, size_t n,
                const std::vector<float>& hidden_out, const std::vector<float>& logits, float scale, size_t divisor,
                const std::function<float*(size_t)>& grad, const std::function<void(size_t)>& ready) const;
};

}  // namespace accel::train
