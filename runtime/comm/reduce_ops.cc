// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/reduce_ops.h"

#include <algorithm>

#include "lib/common/call_names.h"
#include "lib/common/error.h"
#include "runtime/comm/half.h"

namespace accel {

namespace {

struct Sum {
  template <typename T> T operator()(T a, T b) const { return a + b; }
};
struct Prod {
  template <typename T> T operator()(T a, T b) const { return a * b; }
};
struct Max {
  template <typename T> T operator()(T a, T b) const { return std::max(a, b); }
};
struct Min {
  template <typename T> T operator()(T a, T b) const { return std::min(a, b); }
};

template <typename T, typename Op> void plain(void* c, const void* a, const void* b, size_t n) {
  auto* out = static_cast<T*>(c);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  Op op;
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(op(x[i], y[i]));
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float), typename Op>
void viaFloat(void* c, const void* a, const void* b, size_t n) {
  auto* out = static_cast<uint16_t*>(c);
  auto* x = static_cast<const uint16_t*>(a);
  auto* y = static_cast<const uint16_t*>(b);
  Op op;
  for (size_t i = 0; i < n; ++i) out[i] = FromFloat(op(ToFloat(x[i]), ToFloat(y[i])));
}

template <typename Op> ReduceFunction forOp(DataType t) {
  switch (t) {
    case DataType::F32: return &plain<float, Op>;
    case DataType::F64: return &plain<double, Op>;
    case DataType::I32: return &plain<int32_t, Op>;
    case DataType::I64: return &plain<int64_t, Op>;
    case DataType::U8: return &plain<uint8_t, Op>;
    case DataType::F16: return &viaFloat<halfToFloat, floatToHalf, Op>;
    case DataType::BF16: return &viaFloat<bf16ToFloat, floatToBf16, Op>;
  }
  return nullptr;
}

template <typename T> void divide(void* data, size_t n, int world) {
  auto* p = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(world));
}

}  // namespace

ReduceFunction reduceFunction(DataType dtype, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return forOp<Sum>(dtype);
    case ReduceOp::Product: return forOp<Prod>(dtype);
    case ReduceOp::Max: return forOp<Max>(dtype);
    case ReduceOp::Min: return forOp<Min>(dtype);
  }
  throw Error("unknown reduce op");
}

void finishAverage(Tensor t, int world) {
  switch (t.dtype) {
    case DataType::F32: return divide<float>(t.data, t.count, world);
    case DataType::F64: return divide<double>(t.data, t.count, world);
    case DataType::I32: return divide<int32_t>(t.data, t.count, world);
    case DataType::I64: return divide<int64_t>(t.data, t.count, world);
    case DataType::U8: return divide<uint8_t>(t.data, t.count, world);
    case DataType::F16:
    case DataType::BF16: {
      auto* p = static_cast<uint16_t*>(t.data);
      bool bf = t.dtype == DataType::BF16;
      for (size_t i = 0; i < t.count; ++i) {
        float v = (bf ? bf16ToFloat(p[i]) : halfToFloat(p[i])) / static_cast<float>(world);
        p[i] = bf ? floatToBf16(v) : floatToHalf(v);
      }
      return;
    }
  }
}

size_t dtypeSize(DataType t) {
  switch (t) {
    case DataType::F32:
    case DataType::I32: return 4;
    case DataType::F64:
    case DataType::I64: return 8;
    case DataType::F16:
    case DataType::BF16: return 2;
    case DataType::U8: return 1;
  }
  return 1;
}

const char* dtypeName(DataType t) { return calls::dtypeName(static_cast<unsigned>(t)); }

const char* reduceOpName(ReduceOp op) { return calls::reduceOpName(static_cast<unsigned>(op)); }

}  // namespace accel
