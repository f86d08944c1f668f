// SPDX-License-Identifier: Apache-2.0
// One collective on benchmark buffers and the check of its result, shared by accel-bench's
// report and its preflight: every rank contributes rank+1 in every element, so each result has
// one expected value per element, exact in every dtype for the worlds a machine runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/bench/bench_memory.h"
#include "runtime/comm/backend.h"

namespace accel::bench {

// An input and an output buffer, in CUDA memory for a backend named "nccl".
struct Buffers {
  Buffers(size_t in_bytes, size_t out_bytes, bool device)
      : in(in_bytes, device), out(out_bytes, device), device_(device) {}
  BenchBuffer in, out;
  bool device_;
  Tensor tensor(BenchBuffer& b, DataType t) const {
    return {b.data(), b.bytes() / dtypeSize(t), t, device_ ? DeviceType::CUDA : DeviceType::CPU};
  }
};

// Every element of `buf` set to `value` in dtype `t`.
void setAll(std::vector<uint8_t>& buf, DataType t, double value);

// One operation of `op` (all_reduce, broadcast from 0, all_gather, reduce_scatter) on `count`
// elements per rank; returns its Work.
WorkPtr runOp(Backend& b, const std::string& op, Buffers& buf, DataType t, size_t count);

// Runs `op` once with every rank's input rank+1 and returns how many of this rank's result
// elements are wrong. `corrupt`: this rank's result is altered before the check (a preflight's
// proof that a wrong result is caught).
size_t verify(Backend& b, const std::string& op, Buffers& buf, DataType t, size_t count, bool corrupt = false);

double median(std::vector<double> v);

}  // namespace accel::bench
