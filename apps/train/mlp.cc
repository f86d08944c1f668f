// SPDX-License-Identifier: Apache-2.0
#include "apps/train/mlp.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace accel::train {

Mlp::Mlp(int hidden_units, uint64_t seed, int w1_row_blocks)
    : hidden(hidden_units), w1_blocks(std::clamp(w1_row_blocks, 1, hidden_units)) {
  std::mt19937_64 rng(seed);
  auto init = [&rng](size_t n, int fan_in) {
    std::vector<float> w(n);
    const double bound = std::sqrt(6.0 / fan_in);  // He-uniform for ReLU
    for (auto& v : w) v = static_cast<float>((static_cast<double>(rng() >> 11) / 9007199254740992.0 * 2 - 1) * bound);
    return w;
  };
  params = {init(static_cast<size_t>(hidden) * kFeatures, kFeatures),
            std::vector<float>(static_cast<size_t>(hidden), 0.0f), init(static_cast<size_t>(kClasses) * hidden, hidden),
            std::vector<float>(kClasses, 0.0f)};
}

std::vector<Mlp::Slot> Mlp::slots() const {
  std::vector<Slot> out;
  const size_t H = static_cast<size_t>(hidden), K = static_cast<size_t>(w1_blocks);
  for (size_t k = 0; k < K; ++k) {
    const size_t r0 = k * H / K, r1 = (k + 1) * H / K;
    out.push_back({0, r0 * kFeatures, (r1 - r0) * kFeatures});
  }
  for (size_t p = 1; p < params.size(); ++p) out.push_back({p, 0, params[p].size()});
  return out;
}

std::vector<size_t> Mlp::counts() const {
  std::vector<size_t> c;
  for (const auto& s : slots()) c.push_back(s.count);
  return c;
}

float Mlp::forward(const std::vector<std::vector<float>>& w, const float* x, const int32_t* y, size_t n,
                   std::vector<float>& h, std::vector<float>& logits) const {
  const size_t H = static_cast<size_t>(hidden);
  h.assign(n * H, 0.0f);
  logits.assign(n * kClasses, 0.0f);
  double loss = 0;
  for (size_t s = 0; s < n; ++s) {
    for (size_t j = 0; j < H; ++j) {
      float acc = w[1][j];
      for (int f = 0; f < kFeatures; ++f)
        acc += w[0][j * kFeatures + static_cast<size_t>(f)] * x[s * kFeatures + static_cast<size_t>(f)];
      h[s * H + j] = std::max(acc, 0.0f);
    }
    float top = -1e30f;
    for (int c = 0; c < kClasses; ++c) {
      float acc = w[3][static_cast<size_t>(c)];
      for (size_t j = 0; j < H; ++j) acc += w[2][static_cast<size_t>(c) * H + j] * h[s * H + j];
      logits[s * kClasses + static_cast<size_t>(c)] = acc;
      top = std::max(top, acc);
    }
    double sum = 0;
    for (int c = 0; c < kClasses; ++c) sum += std::exp(logits[s * kClasses + static_cast<size_t>(c)] - top);
    if (y) loss += std::log(sum) + top - logits[s * kClasses + static_cast<size_t>(y[s])];
  }
  return n ? static_cast<float>(loss / static_cast<double>(n)) : 0.0f;
}

void Mlp::backward(const std::vector<std::vector<float>>& w, const float* x, const int32_t* y, size_t n,
                   const std::vector<float>& h, const std::vector<float>& logits, float scale, size_t divisor,
                   const std::function<float*(size_t)>& grad, const std::function<void(size_t)>& ready) const {
  const size_t H = static_cast<size_t>(hidden);
  std::vector<float> dlogits(n * kClasses);
  for (size_t s = 0; s < n; ++s) {
    float top = *std::max_element(&logits[s * kClasses], &logits[s * kClasses] + kClasses);
    double sum = 0;
    for (int c = 0; c < kClasses; ++c) sum += std::exp(logits[s * kClasses + static_cast<size_t>(c)] - top);
    for (int c = 0; c < kClasses; ++c) {
      double p = std::exp(logits[s * kClasses + static_cast<size_t>(c)] - top) / sum;
      dlogits[s * kClasses + static_cast<size_t>(c)] =
          static_cast<float>((p - (c == y[s] ? 1.0 : 0.0)) * scale / static_cast<double>(divisor));
    }
  }
  const size_t K = static_cast<size_t>(w1_blocks);
  float* gW2 = grad(K + 1);
  float* gb2 = grad(K + 2);
  for (size_t s = 0; s < n; ++s)
    for (int c = 0; c < kClasses; ++c) {
      float d = dlogits[s * kClasses + static_cast<size_t>(c)];
      gb2[c] += d;
      for (size_t j = 0; j < H; ++j) gW2[static_cast<size_t>(c) * H + j] += d * h[s * H + j];
    }
  ready(K + 2);
  ready(K + 1);  // the last layer's gradients are on the wire while the first layer's are computed
  // dh for every sample first: the first layer's bias gradient is then ready (and its bucket on
  // the wire) before the expensive weight gradient is accumulated.
  std::vector<float> dh(n * H);
  for (size_t s = 0; s < n; ++s)
    for (size_t j = 0; j < H; ++j) {
      float acc = 0;
      for (int c = 0; c < kClasses; ++c)
        acc += dlogits[s * kClasses + static_cast<size_t>(c)] * w[2][static_cast<size_t>(c) * H + j];
      dh[s * H + j] = h[s * H + j] > 0 ? acc : 0.0f;
    }
  float* gb1 = grad(K);
  for (size_t s = 0; s < n; ++s)
    for (size_t j = 0; j < H; ++j) gb1[j] += dh[s * H + j];
  ready(K);
  // W1 row block by row block, last first (reverse registration order, as the buckets are
  // formed): each block's all-reduce starts while the earlier rows are accumulated. Every
  // element still sums over samples in the same order, so the result is bit-identical to a
  // sample-major loop.
  for (size_t k = K; k-- > 0;) {
    const size_t r0 = k * H / K, r1 = (k + 1) * H / K;
    float* g = grad(k);
    for (size_t j = r0; j < r1; ++j) {
      float* row = g + (j - r0) * kFeatures;
      for (size_t s = 0; s < n; ++s) {
        const float d = dh[s * H + j];
        const float* xs = x + s * kFeatures;
        for (int f = 0; f < kFeatures; ++f) row[f] += d * xs[f];
      }
    }
    ready(k);
  }
}

}  // namespace accel::train
