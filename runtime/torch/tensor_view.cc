// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/tensor_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lib/common/error.h"

namespace accel {

DataType runtimeType(at::ScalarType type, const std::string& what) {
  switch (type) {
    case at::kFloat: return DataType::F32;
    case at::kDouble: return DataType::F64;
    case at::kHalf: return DataType::F16;
    case at::kBFloat16: return DataType::BF16;
    case at::kInt: return DataType::I32;
    case at::kLong: return DataType::I64;
    case at::kByte: return DataType::U8;
    default:
      throw Error(fmt::format("{} is {}, which accel's collectives do not carry", what, c10::toString(type)),
                  "use float, double, half, bfloat16, int32, int64 or uint8 tensors");
  }
}

DeviceType runtimeDevice(const at::Device& device, const std::string& what) {
  if (device.is_cpu()) return DeviceType::CPU;
  if (device.is_cuda()) return DeviceType::CUDA;
  throw Error(fmt::format("{} is on {}, where accel has no collectives", what, device.str()),
              "move it to the CPU or a CUDA device");
}

Tensor viewOf(const at::Tensor& tensor, const std::string& what) {
  if (!tensor.is_contiguous()) {
    throw Error(fmt::format("{} is not contiguous", what), "call .contiguous() on it first");
  }
  const at::Device device = tensor.device();
  return {tensor.data_ptr(), static_cast<size_t>(tensor.numel()), runtimeType(tensor.scalar_type(), what),
          runtimeDevice(device, what), device.has_index() ? device.index() : 0};
}

Tensor bytesOf(const at::Tensor& tensor, const std::string& what) {
  Tensor view = viewOf(tensor, what);
  view.count = tensor.numel() * static_cast<size_t>(tensor.element_size());
  view.dtype = DataType::U8;
  return view;
}

std::string shapeText(at::IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

void broadcastFromRankZero(Backend& group, const std::vector<at::Tensor>& tensors, const std::string& what) {
  std::vector<WorkPtr> works;
  for (const auto& t : tensors) works.push_back(group.broadcast(bytesOf(t, what), 0));
  for (auto& w : works) w->wait();
}

}  // namespace accel
