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

  Mlp(int hidden_units, uint64_t seed);
  std::vector<size_t> counts() const;

  // Mean loss over the `n` samples at `x`; logits into `logits` (n x 10). `weights` are the
  // working copies (the parameters, or their half-precision rounding).
  float forward(const std::vector<std::vector<float>>& weights, const float* x, const int32_t* y, size_t n,
                std::vector<float>& hidden_out, std::vector<float>& logits) const;
  // Adds d(loss * scale * n / divisor)/d(param) into grad(i) and calls ready(i) for i = 3, 2, 1, 0.
  void backward(const std::vector<std::vector<float>>& weights, const float* x, const int32_t* y, size_t n,
                const std::vector<float>& hidden_out, const std::vector<float>& logits, float scale, size_t divisor,
                const std::function<float*(size_t)>& grad, const std::function<void(size_t)>& ready) const;
};

}  // namespace accel::train
