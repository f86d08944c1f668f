// SPDX-License-Identifier: Apache-2.0
#include "apps/train/tensor_blobs.h"

#include <cstring>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel::train {

std::vector<uint8_t> bytesOf(const std::vector<std::vector<float>>& tensors) {
  std::vector<uint8_t> out;
  for (const auto& t : tensors) {
    auto* p = reinterpret_cast<const uint8_t*>(t.data());
    out.insert(out.end(), p, p + t.size() * sizeof(float));
  }
  return out;
}

const std::vector<uint8_t>& blob(const CheckpointPart& part, const std::string& name, const std::string& dir) {
  auto it = part.blobs.find(name);
  if (it == part.blobs.end()) {
    throw Error(fmt::format("checkpoint {}: this rank's part has no '{}'", dir, name),
                "was it written by another program? resume from an accel-train checkpoint, or start without --resume");
  }
  return it->second;
}

void loadBytes(std::vector<std::vector<float>>& tensors, const std::vector<uint8_t>& bytes, const char* what) {
  size_t need = 0;
  for (const auto& t : tensors) need += t.size() * sizeof(float);
  if (bytes.size() != need) {
    throw Error(fmt::format("checkpoint: the {} hold {} bytes, this model needs {}", what, bytes.size(), need),
                "resume with the --hidden of the run that saved it");
  }
  size_t at = 0;
  for (auto& t : tensors) {
    std::memcpy(t.data(), bytes.data() + at, t.size() * sizeof(float));
    at += t.size() * sizeof(float);
  }
}

}  // namespace accel::train
