// SPDX-License-Identifier: Apache-2.0
#include "runtime/amp/precision.h"

#include <cmath>

#include "lib/common/error.h"
#include "runtime/comm/backend.h"
#include "runtime/comm/half.h"

namespace accel {

Precision parsePrecision(const std::string& text) {
  if (text == "no" || text.empty()) return Precision::Fp32;
  if (text == "fp16") return Precision::Fp16;
  if (text == "bf16") return Precision::Bf16;
  if (text == "fp8") throw Error("mixed precision fp8 is not supported by accel's runtime yet", "use bf16 or fp16");
  throw Error("unknown mixed precision '" + text + "'", "use no, fp16 or bf16");
}

void castToFp16(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = floatToHalf(in[i]);
}
void castFromFp16(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = halfToFloat(in[i]);
}
void castToBf16(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = floatToBf16(in[i]);
}
void castFromBf16(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = bf16ToFloat(in[i]);
}

MasterWeights::MasterWeights(std::vector<std::vector<float>> masters, Precision precision)
    : masters_(std::move(masters)), precision_(precision) {}

const std::vector<std::vector<float>>& MasterWeights::working() {
  working_.resize(masters_.size());
  for (size_t t = 0; t < masters_.size(); ++t) {
    const auto& m = masters_[t];
    auto& w = working_[t];
    w.resize(m.size());
    if (precision_ == Precision::Fp32) {
      w = m;
      continue;
    }
    scratch_.resize(m.size());
    if (precision_ == Precision::Fp16) {
      castToFp16(m.data(), scratch_.data(), m.size());
      castFromFp16(scratch_.data(), w.data(), m.size());
    } else {
      castToBf16(m.data(), scratch_.data(), m.size());
      castFromBf16(scratch_.data(), w.data(), m.size());
    }
  }
  return working_;
}

double clipGradNorm(const std::vector<float*>& grads, const std::vector<size_t>& counts, double max_norm, Backend* group) {
  double squares = 0;
  for (size_t t = 0; t < grads.size(); ++t)
    for (size_t i = 0; i < counts[t]; ++i) squares += static_cast<double>(grads[t][i]) * grads[t][i];
  if (group && group->size() > 1) group->allReduce(cpuTensor(&squares, 1), ReduceOp::Sum)->wait();
  const double norm = std::sqrt(squares);
  const double factor = max_norm / (norm + 1e-6);  // torch's clip_grad_norm_ epsilon
  if (factor < 1.0) {
    for (size_t t = 0; t < grads.size(); ++t)
      for (size_t i = 0; i < counts[t]; ++i) grads[t][i] = static_cast<float>(grads[t][i] * factor);
  }
  return norm;
}

}  // namespace accel
