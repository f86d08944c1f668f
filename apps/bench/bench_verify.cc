// SPDX-License-Identifier: Apache-2.0
#include "apps/bench/bench_verify.h"

#include <algorithm>
#include <cstring>

#include "runtime/comm/half.h"

namespace accel::bench {

namespace {

template <typename T> void fill(std::vector<uint8_t>& buf, T value) {
  for (size_t i = 0; i + sizeof(T) <= buf.size(); i += sizeof(T)) std::memcpy(buf.data() + i, &value, sizeof(T));
}

size_t countWrong(const std::vector<uint8_t>& buf, DataType t, double expected) {
  std::vector<uint8_t> want(buf.size());
  setAll(want, t, expected);
  size_t wrong = 0, width = dtypeSize(t);
  for (size_t i = 0; i < buf.size(); i += width) wrong += std::memcmp(&buf[i], &want[i], width) != 0;
  return wrong;
}

}  // namespace

void setAll(std::vector<uint8_t>& buf, DataType t, double value) {
  switch (t) {
    case DataType::F32: return fill(buf, static_cast<float>(value));
    case DataType::F64: return fill(buf, value);
    case DataType::F16: return fill(buf, floatToHalf(static_cast<float>(value)));
    case DataType::BF16: return fill(buf, floatToBf16(static_cast<float>(value)));
    case DataType::I32: return fill(buf, static_cast<int32_t>(value));
    case DataType::I64: return fill(buf, static_cast<int64_t>(value));
    case DataType::U8: return fill(buf, static_cast<uint8_t>(value));
  }
}

WorkPtr runOp(Backend& b, const std::string& op, Buffers& buf, DataType t, size_t count) {
  Tensor in = buf.tensor(buf.in, t), out = buf.tensor(buf.out, t);
  if (op == "all_reduce") return b.allReduce(in, ReduceOp::Sum);
  if (op == "broadcast") return b.broadcast(in, 0);
  if (op == "all_gather") return b.allGather(in.slice(0, count), out);
  return b.reduceScatter(in, out.slice(0, count), ReduceOp::Sum);
}

size_t verify(Backend& b, const std::string& op, Buffers& buf, DataType t, size_t count, bool corrupt) {
  const int n = b.size(), r = b.rank();
  std::vector<uint8_t> host(buf.in.bytes());
  setAll(host, t, r + 1);
  buf.in.upload(host);
  runOp(b, op, buf, t, count)->wait();
  const bool in_place = op == "all_reduce" || op == "broadcast";
  std::vector<uint8_t> result = in_place ? buf.in.download() : buf.out.download();
  if (corrupt && !result.empty()) result[0] ^= 0x5a;
  if (op == "all_reduce") return countWrong(result, t, n * (n + 1) / 2.0);
  if (op == "broadcast") return countWrong(result, t, 1);
  if (op == "reduce_scatter") {
    result.resize(count * dtypeSize(t));
    return countWrong(result, t, n * (n + 1) / 2.0);
  }
  size_t wrong = 0, chunk = count * dtypeSize(t);
  for (int k = 0; k < n; ++k) {
    std::vector<uint8_t> part(result.begin() + static_cast<long>(k * chunk),
                              result.begin() + static_cast<long>((k + 1) * chunk));
    wrong += countWrong(part, t, k + 1);
  }
  return wrong;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace accel::bench
