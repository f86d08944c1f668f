// SPDX-License-Identifier: Apache-2.0
// The one bridge between libtorch tensors and the runtime's collectives: the runtime's view of a
// tensor's memory (comm/types.h Tensor), and back. Views never copy: the torch tensor owns the
// memory and must outlive every collective on the view.
#pragma once

#include <string>
#include <vector>

#include <torch/types.h>

#include "runtime/comm/backend.h"
#include "runtime/comm/types.h"

namespace accel {

// The runtime's element type of a torch dtype; throws Error naming `what` and the dtype for one
// the collectives do not carry.
DataType runtimeType(at::ScalarType type, const std::string& what);
// Where the tensor lives, as the runtime names devices; throws Error for a device the runtime
// has no collectives on (naming `what`).
DeviceType runtimeDevice(const at::Device& device, const std::string& what);
// A view of a contiguous tensor's memory; throws Error naming `what` when it is not contiguous.
Tensor viewOf(const at::Tensor& tensor, const std::string& what);
// The same memory seen as bytes (U8), for moving tensors of any dtype (buffers, RNG states).
Tensor bytesOf(const at::Tensor& tensor, const std::string& what);
// Every tensor's bytes from rank 0 of `group`, in place, in order (a model's initial state,
// buffers before a forward). Collective; blocks until done.
void broadcastFromRankZero(Backend& group, const std::vector<at::Tensor>& tensors, const std::string& what);
// "[64, 784]", for messages.
std::string shapeText(at::IntArrayRef sizes);

}  // namespace accel
