// SPDX-License-Identifier: Apache-2.0
// One bucket's flat gradient storage (f32, f16 or bf16 elements), in CPU memory or on a CUDA
// device, and the half-precision copy that goes on the wire when an f32 bucket's all-reduce is
// compressed (PyTorch's fp16/bf16 compress hooks). Device work is queued on the legacy default stream, where the
// trainer's kernels write the gradients, so it is ordered with them and the NCCL backend waits for it. CUDA memory
// needs a runtime built with nvcc (ACCEL_HAVE_CUDA_KERNELS); otherwise the constructor throws Error. Move-only; not
// thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/comm/types.h"

namespace accel {

enum class Compression { None, Fp16, Bf16 };

class BucketStorage {
 public:
  BucketStorage(size_t count, DataType dtype, DeviceType device, int device_index);  // zeroed
  ~BucketStorage();
  BucketStorage(BucketStorage&& other) noexcept;
  BucketStorage& operator=(BucketStorage&& other) noexcept;
  BucketStorage(const BucketStorage&) = delete;
  BucketStorage& operator=(const BucketStorage&) = delete;

  void* data() const { return data_; }
  size_t size() const { return count_; }
  DataType dtype() const { return dtype_; }
  bool onDevice() const { return device_ == DeviceType::CUDA; }

  void zero();
  // Multiplies the `n` elements at `begin`, inside data(), by `factor` (half types through f32,
  // rounded back to nearest even).
  void scale(void* begin, size_t n, float factor);
  // Copies `bytes` between this storage and memory of the same kind (a user's gradient buffer),
  // or zeroes `bytes` at `to` there.
  void copy(void* to, const void* from, size_t bytes);
  void clear(void* to, size_t bytes);
  // What to all-reduce: data() itself, or (compressed f32) a half copy of it made now.
  Tensor wire(Compression c);
  // After the all-reduce of a compressed wire(): the reduced half copy back into data().
  void unwire(Compression c);

 private:
  void release() noexcept;

  void* data_ = nullptr;
  size_t count_ = 0;
  DataType dtype_ = DataType::F32;
  DeviceType device_ = DeviceType::CPU;
  int index_ = 0;
  uint16_t* half_ = nullptr;   // device half copy (made on first compressed use)
  std::vector<uint8_t> host_;  // CPU storage
  std::vector<uint16_t> host_half_;
};

}  // namespace accel
