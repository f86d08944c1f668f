// SPDX-License-Identifier: Apache-2.0
#include "runtime/ddp/bucket_storage.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "runtime/amp/precision.h"
#include "runtime/comm/half.h"
#include "runtime/ddp/device_memory.h"

namespace accel {

namespace {

// v *= factor for half-precision bits, through f32 (as the device kernels do).
void scaleHalves(uint16_t* v, size_t n, float factor, bool bf16) {
  for (size_t k = 0; k < n; ++k) {
    v[k] = bf16 ? floatToBf16(bf16ToFloat(v[k]) * factor) : floatToHalf(halfToFloat(v[k]) * factor);
  }
}

}  // namespace

BucketStorage::BucketStorage(size_t count, DataType dtype, DeviceType device, int device_index)
    : count_(count), dtype_(dtype), device_(device), index_(device_index) {
  if (dtype != DataType::F32 && dtype != DataType::F16 && dtype != DataType::BF16) {
    throw Error(fmt::format("gradient buckets: {} gradients cannot be averaged", dtypeName(dtype)),
                "register f32, f16 or bf16 gradients");
  }
  const size_t bytes = count * dtypeSize(dtype);
  if (device == DeviceType::CPU) {
    host_.assign(bytes, 0);
    data_ = host_.data();
    return;
  }
  data_ = device_memory::allocateZeroed(bytes, device_index);
}

BucketStorage::~BucketStorage() { release(); }

void BucketStorage::release() noexcept {
  if (onDevice()) {
    device_memory::release(data_);
    device_memory::release(half_);
  }
  data_ = nullptr;
  half_ = nullptr;
}

BucketStorage::BucketStorage(BucketStorage&& o) noexcept { *this = std::move(o); }

BucketStorage& BucketStorage::operator=(BucketStorage&& o) noexcept {
  if (this == &o) return *this;
  release();
  count_ = o.count_;
  dtype_ = o.dtype_;
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

void BucketStorage::zero() { clear(data_, count_ * dtypeSize(dtype_)); }

void BucketStorage::scale(void* begin, size_t n, float factor) {
  const bool bf = dtype_ == DataType::BF16;
  if (!onDevice()) {
    if (dtype_ == DataType::F32) {
      auto* v = static_cast<float*>(begin);
      for (size_t k = 0; k < n; ++k) v[k] *= factor;
    } else {
      scaleHalves(static_cast<uint16_t*>(begin), n, factor, bf);
    }
    return;
  }
  if (dtype_ == DataType::F32) {
    device_memory::scale(static_cast<float*>(begin), n, factor);
  } else {
    device_memory::scaleHalf(static_cast<uint16_t*>(begin), n, factor, bf);
  }
}

void BucketStorage::copy(void* to, const void* from, size_t bytes) {
  if (!onDevice()) {
    std::memcpy(to, from, bytes);
    return;
  }
  device_memory::copy(to, from, bytes);
}

void BucketStorage::clear(void* to, size_t bytes) {
  if (!onDevice()) {
    std::memset(to, 0, bytes);
    return;
  }
  device_memory::clear(to, bytes);
}

Tensor BucketStorage::wire(Compression c) {
  if (c == Compression::None || dtype_ != DataType::F32) return {data_, count_, dtype_, device_, index_};
  const bool bf = c == Compression::Bf16;
  const DataType type = bf ? DataType::BF16 : DataType::F16;
  auto* f = static_cast<float*>(data_);
  if (!onDevice()) {
    host_half_.resize(count_);
    bf ? castToBf16(f, host_half_.data(), count_) : castToFp16(f, host_half_.data(), count_);
    return {host_half_.data(), count_, type, device_, index_};
  }
  if (!half_) half_ = static_cast<uint16_t*>(device_memory::allocateZeroed(count_ * sizeof(uint16_t), index_));
  device_memory::toHalf(f, half_, count_, bf);
  return {half_, count_, type, device_, index_};
}

void BucketStorage::unwire(Compression c) {
  if (c == Compression::None || dtype_ != DataType::F32) return;
  const bool bf = c == Compression::Bf16;
  auto* f = static_cast<float*>(data_);
  if (!onDevice()) {
    bf ? castFromBf16(host_half_.data(), f, count_) : castFromFp16(host_half_.data(), f, count_);
    return;
  }
  device_memory::fromHalf(half_, f, count_, bf);
}

}  // namespace accel
