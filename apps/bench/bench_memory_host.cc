// SPDX-License-Identifier: Apache-2.0
// Built without CUDA: every buffer lives in host memory.
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "apps/bench/bench_memory.h"

namespace accel::bench {

BenchBuffer::BenchBuffer(size_t bytes, bool on_device) : bytes_(bytes), on_device_(on_device) {
  if (on_device) throw std::runtime_error("this accel-bench was built without CUDA");
  data_ = std::calloc(bytes ? bytes : 1, 1);
}
BenchBuffer::~BenchBuffer() { std::free(data_); }
void BenchBuffer::upload(const std::vector<uint8_t>& host) { std::memcpy(data_, host.data(), bytes_); }
std::vector<uint8_t> BenchBuffer::download() const {
  auto* p = static_cast<const uint8_t*>(data_);
  return {p, p + bytes_};
}

void BenchBuffer::copyFrom(const BenchBuffer& src) { std::memcpy(data_, src.data_, bytes_); }

}  // namespace accel::bench
