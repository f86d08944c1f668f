// SPDX-License-Identifier: Apache-2.0
// What collectives operate on: a non-owning view of typed memory on a device, and the reduce ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel {

// Last names the last enumerator, for range checks of decoded values: a new one goes after it
// and becomes Last (collective_call_test checks that every value up to Last has a name).
enum class DataType { F32, F64, F16, BF16, I32, I64, U8, Last = U8 };
enum class ReduceOp { Sum, Avg, Min, Max, Product, Last = Product };
enum class DeviceType { CPU, CUDA };

size_t dtypeSize(DataType t);
const char* dtypeName(DataType t);  // "f32", "bf16", …
const char* reduceOpName(ReduceOp op);

// Memory a collective reads or writes. The caller owns it and keeps it alive until the
// operation's Work has completed.
struct Tensor {
  void* data = nullptr;
  size_t count = 0;  // elements
  DataType dtype = DataType::F32;
  DeviceType device = DeviceType::CPU;
  int device_index = 0;

  size_t bytes() const { return count * dtypeSize(dtype); }
  Tensor slice(size_t offset, size_t n) const {
    return {static_cast<uint8_t*>(data) + offset * dtypeSize(dtype), n, dtype, device, device_index};
  }
};

template <typename T> constexpr DataType dataTypeOf();
template <> constexpr DataType dataTypeOf<float>() { return DataType::F32; }
template <> constexpr DataType dataTypeOf<double>() { return DataType::F64; }
template <> constexpr DataType dataTypeOf<int32_t>() { return DataType::I32; }
template <> constexpr DataType dataTypeOf<int64_t>() { return DataType::I64; }
template <> constexpr DataType dataTypeOf<uint8_t>() { return DataType::U8; }

template <typename T> Tensor cpuTensor(T* data, size_t count) {
  return {data, count, dataTypeOf<T>(), DeviceType::CPU, 0};
}

}  // namespace accel
