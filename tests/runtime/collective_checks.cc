// SPDX-License-Identifier: Apache-2.0
#include "tests/runtime/collective_checks.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "runtime/comm/half.h"
#include "runtime/comm/reduce_ops.h"

namespace accel::test {

const std::vector<DataType> kTypes = {DataType::F32, DataType::F64, DataType::F16, DataType::BF16,
                                      DataType::I32, DataType::I64, DataType::U8};
const std::vector<ReduceOp> kOps = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Min, ReduceOp::Max, ReduceOp::Product};

namespace {
std::atomic<int> quick_counts{0};
}  // namespace

QuickCounts::QuickCounts() { ++quick_counts; }
QuickCounts::~QuickCounts() { --quick_counts; }

const std::vector<size_t>& testCounts() {
  static const std::vector<size_t> quick{0, 1, 7, 1000, 4099}, full{0, 1, 7, 1000, (1u << 20) + 3};
  return std::getenv("ACCEL_TEST_QUICK") || quick_counts > 0 ? quick : full;
}

void fillWith(std::vector<uint8_t>& buf, DataType t, size_t n, const std::function<size_t(size_t)>& value) {
  buf.resize(n * dtypeSize(t));
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(value(i));
    void* p = buf.data() + i * dtypeSize(t);
    switch (t) {
      case DataType::F32: {
        float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case DataType::F64: std::memcpy(p, &v, 8); break;
      case DataType::F16: {
        uint16_t h = floatToHalf(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DataType::BF16: {
        uint16_t h = floatToBf16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DataType::I32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      case DataType::I64: {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(p, &x, 8);
        break;
      }
      case DataType::U8: {
        uint8_t x = static_cast<uint8_t>(v);
        std::memcpy(p, &x, 1);
        break;
      }
    }
  }
}

void fill(std::vector<uint8_t>& buf, DataType t, size_t n, int r, size_t offset) {
  fillWith(buf, t, n, [&](size_t i) { return (static_cast<size_t>(r) + i + offset) % 3 + 1; });
}

Tensor view(std::vector<uint8_t>& buf, DataType t) { return {buf.data(), buf.size() / dtypeSize(t), t}; }

std::vector<uint8_t> reference(DataType t, ReduceOp op, size_t n, int world) {
  std::vector<uint8_t> acc, other;
  fill(acc, t, n, 0);
  for (int r = 1; r < world; ++r) {
    fill(other, t, n, r);
    if (n) reduceFunction(t, op)(acc.data(), acc.data(), other.data(), n);
  }
  if (op == ReduceOp::Avg && n) finishAverage(view(acc, t), world);
  return acc;
}

std::string label(const char* op, DataType t, size_t n, int world, int rank) {
  return std::string(op) + " " + dtypeName(t) + " x " + std::to_string(n) + " world " + std::to_string(world) +
         " rank " + std::to_string(rank);
}

// Places `in` and `out`, runs `op` on them, fetches both back (also when `op` throws).
void through(const Placement& at, std::vector<uint8_t>& in, std::vector<uint8_t>& out, DataType t,
             const std::function<WorkPtr(Tensor, Tensor)>& op) {
  Tensor a = at.place(in, t), b = at.place(out, t);
  try {
    op(a, b)->wait();
  } catch (...) {
    at.fetch(a, in);
    at.fetch(b, out);
    throw;
  }
  at.fetch(a, in);
  at.fetch(b, out);
}

void Mismatches::add(std::string s) {
  std::lock_guard<std::mutex> lock(mutex);
  if (list.size() < 20) list.push_back(std::move(s));
}

Placement hostPlacement() {
  return {[](std::vector<uint8_t>& host, DataType t) { return view(host, t); }, [](Tensor, std::vector<uint8_t>&) {}};
}

AllReduceExpected allReduceExpected(int world) {
  AllReduceExpected expected;
  for (auto t : kTypes)
    for (auto op : kOps)
      for (auto n : testCounts()) expected[{t, op, n}] = reference(t, op, n, world);
  return expected;
}

namespace {

double element(const std::vector<uint8_t>& buf, DataType t, size_t i) {
  const uint8_t* p = buf.data() + i * dtypeSize(t);
  switch (t) {
    case DataType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DataType::F64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DataType::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return halfToFloat(h);
    }
    case DataType::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16ToFloat(h);
    }
    case DataType::I32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DataType::I64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case DataType::U8: return *p;
  }
  return 0;
}

// Bit for bit, or for an inexact average to 1 part in 100 (integers still exactly).
bool same(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, DataType t, bool inexact) {
  if (got.size() != want.size()) return false;
  bool floating = t == DataType::F32 || t == DataType::F64 || t == DataType::F16 || t == DataType::BF16;
  if (!inexact || !floating) return got == want;
  for (size_t i = 0; i < got.size() / dtypeSize(t); ++i) {
    double g = element(got, t, i), w = element(want, t, i);
    if (!(std::abs(g - w) <= 1e-2 * std::abs(w))) return false;
  }
  return true;
}

// Whether `out` holds each rank's data one after another, rank r's `counts[r]` elements.
bool chunksAre(const std::vector<uint8_t>& out, DataType t, const std::vector<size_t>& counts, int world) {
  std::vector<uint8_t> piece;
  size_t offset = 0;
  for (int r = 0; r < world; ++r) {
    fill(piece, t, counts[static_cast<size_t>(r)], r);
    if (!piece.empty() && std::memcmp(out.data() + offset, piece.data(), piece.size())) return false;
    offset += piece.size();
  }
  return true;
}

}  // namespace

void checkAllReduce(Backend& b, int rank, int world, const Placement& at, const AllReduceExpected& expected,
                    Mismatches& bad) {
  std::vector<uint8_t> buf, none;
  for (auto t : kTypes)
    for (auto op : kOps)
      for (auto n : testCounts()) {
        fill(buf, t, n, rank);
        through(at, buf, none, t, [&](Tensor x, Tensor) { return b.allReduce(x, op); });
        bool inexact = op == ReduceOp::Avg && !at.exact_average;
        if (!same(buf, expected.at({t, op, n}), t, inexact)) bad.add(label(reduceOpName(op), t, n, world, rank));
      }
}

void checkOtherCollectives(Backend& b, int rank, int world, const Placement& at, Mismatches& bad) {
  const size_t w = static_cast<size_t>(world);
  std::vector<uint8_t> buf, want, in, out, none;
  for (auto t : kTypes)
    for (auto n : testCounts()) {
      fill(buf, t, n, rank);  // broadcast from the last rank
      through(at, buf, none, t, [&](Tensor x, Tensor) { return b.broadcast(x, world - 1); });
      fill(want, t, n, world - 1);
      if (buf != want) bad.add(label("broadcast", t, n, world, rank));

      fill(in, t, n, rank);  // all_gather: chunk r holds rank r's data
      out.assign(n * w * dtypeSize(t), 0);
      through(at, in, out, t, [&](Tensor i, Tensor o) { return b.allGather(i, o); });
      if (!chunksAre(out, t, std::vector<size_t>(w, n), world)) bad.add(label("all_gather", t, n, world, rank));

      std::vector<size_t> counts;  // all_gather_v: rank r contributes n + r elements
      for (int r = 0; r < world; ++r) counts.push_back(n + static_cast<size_t>(r));
      fill(in, t, n + static_cast<size_t>(rank), rank);
      out.assign((n * w + w * (w - 1) / 2) * dtypeSize(t), 0);
      through(at, in, out, t, [&](Tensor i, Tensor o) { return b.allGatherV(i, o, counts); });
      if (!chunksAre(out, t, counts, world)) bad.add(label("all_gather_v", t, n, world, rank));

      for (auto op : kOps) {  // reduce_scatter: chunk `rank` of the element-wise reduction
        fill(in, t, n * w, rank);
        out.assign(n * dtypeSize(t), 0);
        through(at, in, out, t, [&](Tensor i, Tensor o) { return b.reduceScatter(i, o, op); });
        std::vector<uint8_t> full = reference(t, op, n * w, world);
        std::vector<uint8_t> mine(
            full.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(rank) * out.size()),
            full.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(rank + 1) * out.size()));
        if (!same(out, mine, t, op == ReduceOp::Avg && !at.exact_average)) {
          bad.add(label("reduce_scatter", t, n, world, rank) + " " + reduceOpName(op));
        }
      }

      fill(in, t, n, rank);  // gather to rank 0
      out.assign(n * w * dtypeSize(t), 0);
      through(at, in, out, t, [&](Tensor i, Tensor o) { return b.gather(i, o, 0); });
      if (rank == 0 && !chunksAre(out, t, std::vector<size_t>(w, n), world))
        bad.add(label("gather", t, n, world, rank));

      fill(in, t, n * w, 100);  // scatter from the last rank: chunk r is what rank r should get
      out.assign(n * dtypeSize(t), 0);
      through(at, in, out, t, [&](Tensor i, Tensor o) { return b.scatter(i, o, world - 1); });
      fill(want, t, n, 100, static_cast<size_t>(rank) * n);
      if (out != want) bad.add(label("scatter", t, n, world, rank));
      b.barrier()->wait();
    }
}

}  // namespace accel::test
