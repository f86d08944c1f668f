// SPDX-License-Identifier: Apache-2.0
// Built without CUDA: no device, so no peer-to-peer matrix.
#include "apps/bench/bench.h"

namespace accel::bench {

std::string peerAccessMatrix() { return "skipped: this accel-bench was built without CUDA"; }

}  // namespace accel::bench
