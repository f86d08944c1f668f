// SPDX-License-Identifier: Apache-2.0
#include "runtime/amp/precision.h"

#include <cmath>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

namespace {

// x86 F16C converts 8 floats per instruction with IEEE round-to-nearest-even, bit-identical to
// floatToHalf except for NaN payloads (both give a quiet NaN). Chosen at run time.
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void toFp16F16c(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = floatToHalf(in[i]);
}

__attribute__((target("avx,f16c"))) void fromFp16F16c(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  for (; i < n; ++i) out[i] = halfToFloat(in[i]);
}

// 16 floats per iteration: round-to-nearest-even on the integer bits, NaN kept quiet, then a
// saturating pack (values are <= 0xffff) and a lane fix-up, since packus works per 128-bit half.
__attribute__((target("avx2"))) inline __m256i bf16Bits(__m256i u) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x0040));
  return _mm256_blendv_epi8(rounded, quiet_nan, nan);
}

// 16 floats per iteration: round-to-nearest-even on the integer bits, NaN kept quiet, then a
// saturating pack (values are <= 0xffff) and a lane fix-up, since packus works per 128-bit half.
__attribute__((target("avx2"))) void toBf16Avx2(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i a = bf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    __m256i b = bf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 8)));
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  for (; i < n; ++i) out[i] = floatToBf16(in[i]);
}

bool hasAvx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

bool hasF16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
#endif

}  // namespace

void castToFp16(const float* in, uint16_t* out, size_t n) {
#if defined(__x86_64__)
  if (hasF16c()) return toFp16F16c(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = floatToHalf(in[i]);
}

void castFromFp16(const uint16_t* in, float* out, size_t n) {
#if defined(__x86_64__)
  if (hasF16c()) return fromFp16F16c(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = halfToFloat(in[i]);
}

// Branch-free (NaN chosen by a select) where AVX2 is missing, so the compiler can vectorise it.
void castToBf16(const float* in, uint16_t* out, size_t n) {
#if defined(__x86_64__)
  if (hasAvx2()) return toBf16Avx2(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, in + i, 4);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t quiet_nan = (u >> 16) | 0x0040u;
    out[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

void castFromBf16(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = bf16ToFloat(in[i]);
}

MasterWeights::MasterWeights(std::vector<std::vector<float>> masters, Precision precision)
    : masters_(std::move(masters)), precision_(precision) {}

const std::vector<std::vector<float>>& MasterWeights::working() {
  if (precision_ == Precision::Fp32) return masters_;
  if (!stale_) return working_;
  stale_ = false;
  working_.resize(masters_.size());
  for (size_t t = 0; t < masters_.size(); ++t) {
    const auto& m = masters_[t];
    auto& w = working_[t];
    w.resize(m.size());
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

double clipGradNorm(const std::vector<float*>& grads, const std::vector<size_t>& counts, double max_norm,
                    Backend* group) {
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
