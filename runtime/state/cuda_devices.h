// SPDX-License-Identifier: Apache-2.0
// How many CUDA devices this process sees: 0 when the runtime was built without CUDA or there is
// no driver. Never throws.
#pragma once

namespace accel {

int cudaDeviceCount();

}  // namespace accel
