// SPDX-License-Identifier: Apache-2.0
// The safetensors files of a local model and their headers. A model path is one of:
// - a `.safetensors` file;
// - a shard index (`*.safetensors.index.json`: a `weight_map` from tensor name to shard file,
//   the shards beside the index);
// - a directory holding `model.safetensors.index.json` or `model.safetensors` (a Hugging Face
//   model directory), else exactly one other `*.safetensors.index.json` or `*.safetensors`.
// Only headers are read (lib/model/safetensors_header.h). Throws accel::UsageError for a
// missing path, a directory with no model in it, an index that is not JSON or names a shard
// that is missing or that does not hold the tensor mapped to it, a tensor in two shards, and
// each header's own problems.
#pragma once

#include <string>
#include <vector>

#include "lib/model/safetensors_header.h"

namespace accel {

struct ModelFiles {
  std::string index;                      // the shard index read, empty for one file
  std::vector<SafetensorsHeader> shards;  // each file's header, ordered by file name
};

ModelFiles readModelFiles(const std::string& path);

}  // namespace accel
