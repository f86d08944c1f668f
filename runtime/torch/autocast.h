// SPDX-License-Identifier: Apache-2.0
// Mixed-precision forward passes as torch.autocast(device, dtype) does them: inside the scope,
// libtorch's autocast casts the ops it lists (matmul, conv, …) to `dtype` on that device; the
// previous state is restored and autocast's cast cache cleared when the outermost scope ends.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace accel {

// Whether this libtorch's CPU autocast takes `dtype` (libtorch 1.x: bfloat16 only).
bool cpuAutocastSupports(c10::ScalarType dtype);

class AutocastScope {
 public:
  // Disabled: the scope changes nothing (a run without mixed precision).
  AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool enabled_;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

}  // namespace accel
