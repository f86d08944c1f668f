// SPDX-License-Identifier: Apache-2.0
// What every collective must return, shared by the Gloo tests (CPU memory, collectives_test.cc)
// and the NCCL tests (CUDA memory, nccl_test.cc). Rank r's input at element i is
// (r + i) % 3 + 1 in its dtype: sums and products of such small integers are exact in every
// dtype, so any reduction order gives the serial reference's bits.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/comm/backend.h"

namespace accel::test {

extern const std::vector<DataType> kTypes;
extern const std::vector<ReduceOp> kOps;
// 0, 1, 7, 1000 and 2^20 + 3 elements; ACCEL_TEST_QUICK (the sanitizer runs of scripts/test,
// 5-20x slower) trims the largest to 4099, and so does a QuickCounts alive on the test's thread
// before its rank threads start (a transport whose chunks are small already takes several
// chunks at 4099 elements: the large count adds time, not paths).
const std::vector<size_t>& testCounts();
struct QuickCounts {
  QuickCounts();
  ~QuickCounts();
};

// buf = n elements of dtype t, element i holding value(i), a small integer (exact in every dtype).
void fillWith(std::vector<uint8_t>& buf, DataType t, size_t n, const std::function<size_t(size_t)>& value);

// The value rank r holds at element i + offset, in dtype t, as raw bytes.
void fill(std::vector<uint8_t>& buf, DataType t, size_t n, int r, size_t offset = 0);
Tensor view(std::vector<uint8_t>& buf, DataType t);
// Rank 0's data reduced with every other rank's by the runtime's own CPU kernels.
std::vector<uint8_t> reference(DataType t, ReduceOp op, size_t n, int world);

// "all_gather f32 x 7 world 3 rank 1": names a case in a mismatch list.
std::string label(const char* op, DataType t, size_t n, int world, int rank);

// Failures on rank threads are collected as text and checked on the test's thread (Catch2
// assertions are not thread-safe); the first 20 are kept.
struct Mismatches {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(std::string s);
};

// Where a collective's buffers live. `place` returns the tensor the backend works on, holding
// `host`'s bytes; `fetch` copies the result back into `host` and releases the tensor.
struct Placement {
  std::function<Tensor(std::vector<uint8_t>& host, DataType t)> place;
  std::function<void(Tensor t, std::vector<uint8_t>& host)> fetch;
  // NCCL averages floating point by multiplying each input by 1/world first, so its Avg may
  // differ from sum/world in the last bits; then Avg is compared to 1 part in 100.
  bool exact_average = true;
};
Placement hostPlacement();

// Places `in` and `out`, runs `op` on them, fetches both back (also when `op` throws).
void through(const Placement& at, std::vector<uint8_t>& in, std::vector<uint8_t>& out, DataType t,
             const std::function<WorkPtr(Tensor, Tensor)>& op);

// The all_reduce references for every dtype, op and count at this world size (computed once,
// read by every rank).
using AllReduceExpected = std::map<std::tuple<DataType, ReduceOp, size_t>, std::vector<uint8_t>>;
AllReduceExpected allReduceExpected(int world);

// One rank's part: every dtype, op and count through all_reduce.
void checkAllReduce(Backend& b, int rank, int world, const Placement& at, const AllReduceExpected& expected,
                    Mismatches& bad);
// One rank's part: broadcast, all_gather, all_gather_v, reduce_scatter (every op), gather,
// scatter and barrier, for every dtype and count.
void checkOtherCollectives(Backend& b, int rank, int world, const Placement& at, Mismatches& bad);

}  // namespace accel::test
