// SPDX-License-Identifier: Apache-2.0
// accel-train's parameters and optimizer buffers as checkpoint blobs (runtime/checkpoint), and
// back. Pure; errors name what does not fit and how to resume.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint.h"

namespace accel::train {

// The tensors' floats, one after another.
std::vector<uint8_t> bytesOf(const std::vector<std::vector<float>>& tensors);
// The inverse; Error unless `bytes` holds exactly the tensors' sizes (`what` names them).
void loadBytes(std::vector<std::vector<float>>& tensors, const std::vector<uint8_t>& bytes, const char* what);
// The blob `name` of a checkpoint part loaded from `dir`, or an Error naming what is missing.
const std::vector<uint8_t>& blob(const CheckpointPart& part, const std::string& name, const std::string& dir);

}  // namespace accel::train
