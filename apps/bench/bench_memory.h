// SPDX-License-Identifier: Apache-2.0
// Where accel-bench keeps its buffers: host memory for Gloo, CUDA memory for NCCL (builds with
// CUDA only). Blocking copies; single-threaded use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel::bench {

class BenchBuffer {
 public:
  BenchBuffer(size_t bytes, bool on_device);
  ~BenchBuffer();
  BenchBuffer(const BenchBuffer&) = delete;
  BenchBuffer& operator=(const BenchBuffer&) = delete;
  void* data() { return data_; }
  size_t bytes() const { return bytes_; }
  void upload(const std::vector<uint8_t>& host);
  std::vector<uint8_t> download() const;
  // This buffer's bytes from `src` (the same size, the same memory), finished on return.
  void copyFrom(const BenchBuffer& src);

 private:
  void* data_ = nullptr;
  size_t bytes_;
  bool on_device_;
};

}  // namespace accel::bench
