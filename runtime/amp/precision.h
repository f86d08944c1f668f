// SPDX-License-Identifier: Apache-2.0
// Mixed precision for CPU memory: the training precision, casts between fp32 and fp16/bf16
// (round-to-nearest-even; see runtime/comm/half.h), the fp32 master weights with their
// half-precision working copy, and gradient-norm clipping across ranks. Pure functions and a
// plain value type; not thread-safe per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace accel {

class Backend;

enum class Precision { Fp32, Fp16, Bf16 };

// From ACCELERATE_MIXED_PRECISION's values: no, fp16, bf16. fp8 and anything else: Error.
Precision parsePrecision(const std::string& text);

void castToFp16(const float* in, uint16_t* out, size_t n);
void castFromFp16(const uint16_t* in, float* out, size_t n);
void castToBf16(const float* in, uint16_t* out, size_t n);
void castFromBf16(const uint16_t* in, float* out, size_t n);

// fp32 master parameters, and the copy the forward pass uses: the masters rounded to
// `precision` (stored back as float for CPU arithmetic, bit-for-bit what a half load gives).
class MasterWeights {
 public:
  MasterWeights(std::vector<std::vector<float>> masters, Precision precision);
  // Handing out the masters for writing marks the working copy stale.
  std::vector<std::vector<float>>& masters() {
    stale_ = true;
    return masters_;
  }
  // The working copy, rounded again only when the masters may have changed (the masters
  // themselves in fp32).
  const std::vector<std::vector<float>>& working();

 private:
  std::vector<std::vector<float>> masters_;
  std::vector<std::vector<float>> working_;
  std::vector<uint16_t> scratch_;
  Precision precision_;
  bool stale_ = true;
};

// Scales the gradients so their global L2 norm is at most `max_norm`; returns the norm before
// clipping. With `group` (gradients sharded across ranks) the squares are summed over ranks;
// with nullptr (replicated gradients, e.g. after DDP) the local norm is the global one.
double clipGradNorm(const std::vector<float*>& grads, const std::vector<size_t>& counts, double max_norm,
                    Backend* group = nullptr);

}  // namespace accel
