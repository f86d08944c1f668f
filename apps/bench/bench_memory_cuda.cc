// SPDX-License-Identifier: Apache-2.0
// Built with CUDA: device buffers for the NCCL backend, host memory otherwise.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "apps/bench/bench_memory.h"
#include "runtime/comm/cuda_check.h"

namespace accel::bench {

namespace {
void check(cudaError_t e, const char* what) { checkCuda(e, std::string("accel-bench: ") + what); }
}  // namespace

BenchBuffer::BenchBuffer(size_t bytes, bool on_device) : bytes_(bytes), on_device_(on_device) {
  if (on_device) {
    check(cudaMalloc(&data_, bytes ? bytes : 1), "cudaMalloc");
    check(cudaMemset(data_, 0, bytes ? bytes : 1), "cudaMemset");
  } else {
    data_ = std::calloc(bytes ? bytes : 1, 1);
  }
}

BenchBuffer::~BenchBuffer() {
  if (on_device_) {
    cudaFree(data_);
  } else {
    std::free(data_);
  }
}

void BenchBuffer::upload(const std::vector<uint8_t>& host) {
  if (on_device_) {
    check(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), "cudaMemcpy");
  } else {
    std::memcpy(data_, host.data(), bytes_);
  }
}

std::vector<uint8_t> BenchBuffer::download() const {
  std::vector<uint8_t> host(bytes_);
  if (on_device_) {
    check(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy");
  } else {
    std::memcpy(host.data(), data_, bytes_);
  }
  return host;
}

void BenchBuffer::copyFrom(const BenchBuffer& src) {
  if (!on_device_) {
    std::memcpy(data_, src.data_, bytes_);
    return;
  }
  check(cudaMemcpy(data_, src.data_, bytes_, cudaMemcpyDeviceToDevice), "cudaMemcpy");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

}  // namespace accel::bench
