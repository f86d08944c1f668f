// SPDX-License-Identifier: Apache-2.0
#include "runtime/ddp/bucket_storage.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "runtime/amp/precision.h"
#ifdef ACCEL_HAVE_CUDA_KERNELS
#include <cuda_runtime_api.h>

#include "runtime/amp/amp_kernels.h"
#include "runtime/ddp/ddp_kernels.h"
#endif

namespace accel {

namespace {

#ifdef ACCEL_HAVE_CUDA_KERNELS
void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) {
    throw Error(fmt::format("gradient buckets: {}: CUDA error: {}", what, cudaGetErrorString(e)),
                "check that this process sees a CUDA device (`accel env`, CUDA_VISIBLE_DEVICES), or keep the "
                "gradients in CPU memory");
  }
}

template <typename T>
T* deviceArray(size_t n, int device) {
  check(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)), fmt::format("cudaMalloc of {} bytes", n * sizeof(T)));
  check(cudaMemset(p, 0, n * sizeof(T)), "cudaMemset");
  return static_cast<T*>(p);
}
#endif

}  // namespace

BucketStorage::BucketStorage(size_t count, DeviceType device, int device_index)
    : count_(count), device_(device), index_(device_index) {
  if (device == DeviceType::CPU) {
    host_.assign(count, 0.0f);
    data_ = host_.data();
    return;
  }
#ifdef ACCEL_HAVE_CUDA_KERNELS
  data_ = deviceArray<float>(count, device_index);
#else
  throw Error("gradient buckets in CUDA memory: this runtime was built without CUDA (nvcc was not found at configure time)",
              "rebuild with the CUDA toolkit installed, or keep the gradients in CPU memory");
#endif
}

BucketStorage::~BucketStorage() { release(); }

void BucketStorage::release() noexcept {
#ifdef ACCEL_HAVE_CUDA_KERNELS
  if (onDevice()) {
    cudaFree(data_);
    cudaFree(half_);
  }
#endif
  data_ = nullptr;
  half_ = nullptr;
}

BucketStorage::BucketStorage(BucketStorage&& o) noexcept { *this = std::move(o); }

BucketStorage& BucketStorage::operator=(BucketStorage&& o) noexcept {
  if (this == &o) return *this;
  release();
  count_ = o.count_;
  device_ = o.device_;
  index_ = o.index_;
  host_ = std::move(o.host_);
  host_half_ = std::move(o.host_half_);
  data_ = onDevice() ? o.data_ : host_.data();  // a moved vector keeps its buffer
  half_ = o.half_;
  o.data_ = nullptr;
  o.half_ = nullptr;
  o.device_ = DeviceType::CPU;  // nothing left for o to free
  return *this;
}

void BucketStorage::zero() {
  if (!onDevice()) {
    std::fill(host_.begin(), host_.end(), 0.0f);
    return;
  }
#ifdef ACCEL_HAVE_CUDA_KERNELS
  check(cudaMemsetAsync(data_, 0, count_ * sizeof(float), nullptr), "cudaMemsetAsync");
#endif
}

void BucketStorage::scale(float* begin, size_t n, float factor) {
  if (!onDevice()) {
    for (size_t k = 0; k < n; ++k) begin[k] *= factor;
    return;
  }
#ifdef ACCEL_HAVE_CUDA_KERNELS
  cuda::scaleInPlace(begin, n, factor);
#endif
}

Tensor BucketStorage::wire(Compression c) {
  if (c == Compression::None) return {data_, count_, DataType::F32, device_, index_};
  const bool bf = c == Compression::Bf16;
  const DataType type = bf ? DataType::BF16 : DataType::F16;
  if (!onDevice()) {
    host_half_.resize(count_);
    bf ? castToBf16(data_, host_half_.data(), count_) : castToFp16(data_, host_half_.data(), count_);
    return {host_half_.data(), count_, type, device_, index_};
  }
#ifdef ACCEL_HAVE_CUDA_KERNELS
  if (!half_) half_ = deviceArray<uint16_t>(count_, index_);
  bf ? cuda::castToBf16(data_, half_, count_) : cuda::castToFp16(data_, half_, count_);
#endif
  return {half_, count_, type, device_, index_};
}

void BucketStorage::unwire(Compression c) {
  if (c == Compression::None) return;
  const bool bf = c == Compression::Bf16;
  if (!onDevice()) {
    bf ? castFromBf16(host_half_.data(), data_, count_) : castFromFp16(host_half_.data(), data_, count_);
    return;
  }
#ifdef ACCEL_HAVE_CUDA_KERNELS
  bf ? cuda::castFromBf16(half_, data_, count_) : cuda::castFromFp16(half_, data_, count_);
#endif
}

}  // namespace accel
