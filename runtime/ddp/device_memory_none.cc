// SPDX-License-Identifier: Apache-2.0
// The runtime built without nvcc: CUDA gradient buckets cannot be made, so only allocation is
// reachable, and it says why.
#include <stdexcept>
#include <string>

#include "lib/common/error.h"
#include "runtime/ddp/device_memory.h"

namespace accel::device_memory {

void* allocateZeroed(size_t, int) {
  throw Error(
      "gradient buckets in CUDA memory: this runtime was built without CUDA (nvcc was not found at configure time)",
      "rebuild with the CUDA toolkit installed, or keep the gradients in CPU memory");
}

// Without device memory nothing below can be reached: a call is a programming error.
namespace {
[[noreturn]] void unreachable(const char* what) {
  throw std::logic_error(std::string("gradient buckets: ") + what + " on CUDA memory in a runtime built without CUDA");
}
}  // namespace

void release(void* p) noexcept { (void)p; }  // nothing was allocated
void copy(void*, const void*, size_t) { unreachable("copy"); }
void clear(void*, size_t) { unreachable("clear"); }
void scale(float*, size_t, float) { unreachable("scale"); }
void scaleHalf(uint16_t*, size_t, float, bool) { unreachable("scale"); }
void toHalf(const float*, uint16_t*, size_t, bool) { unreachable("cast"); }
void fromHalf(const uint16_t*, float*, size_t, bool) { unreachable("cast"); }

}  // namespace accel::device_memory
