// SPDX-License-Identifier: Apache-2.0
// libtorch's serialize archives as the checkpoint's byte blobs (runtime/checkpoint), and back:
// the one home of that conversion for the component's checkpoint code.
#pragma once

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

namespace accel {

inline std::vector<uint8_t> archiveBytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream out;
  archive.save_to(out);
  const std::string bytes = out.str();
  return {bytes.begin(), bytes.end()};
}

inline std::vector<uint8_t> archiveBytes(const std::function<void(torch::serialize::OutputArchive&)>& fill) {
  torch::serialize::OutputArchive archive;
  fill(archive);
  return archiveBytes(archive);
}

inline torch::serialize::InputArchive openArchive(const std::vector<uint8_t>& bytes) {
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  torch::serialize::InputArchive archive;
  archive.load_from(in);
  return archive;
}

}  // namespace accel
