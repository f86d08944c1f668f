// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace accel {

namespace {
// libtorch 2 names autocast's state per device type; libtorch 1 has a CPU and a GPU setter.
#if TORCH_VERSION_MAJOR >= 2
bool enabledOn(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void enableOn(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
c10::ScalarType dtypeOn(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void setDtypeOn(c10::DeviceType d, c10::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
constexpr bool kCpuHalf = true;
#else
bool enabledOn(c10::DeviceType d) {
  return d == c10::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
}
void enableOn(c10::DeviceType d, bool on) {
  d == c10::kCPU ? at::autocast::set_cpu_enabled(on) : at::autocast::set_enabled(on);
}
c10::ScalarType dtypeOn(c10::DeviceType d) {
  return d == c10::kCPU ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
}
void setDtypeOn(c10::DeviceType d, c10::ScalarType t) {
  d == c10::kCPU ? at::autocast::set_autocast_cpu_dtype(t) : at::autocast::set_autocast_gpu_dtype(t);
}
constexpr bool kCpuHalf = false;
#endif
}  // namespace

bool cpuAutocastSupports(c10::ScalarType dtype) {
  return dtype == c10::ScalarType::BFloat16 || (kCpuHalf && dtype == c10::ScalarType::Half);
}

AutocastScope::AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  previous_enabled_ = enabledOn(device_);
  previous_dtype_ = dtypeOn(device_);
  enableOn(device_, true);
  setDtypeOn(device_, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  enableOn(device_, previous_enabled_);
  setDtypeOn(device_, previous_dtype_);
}

}  // namespace accel
