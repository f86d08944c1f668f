// SPDX-License-Identifier: Apache-2.0
// One safetensors file's header, read without its tensor data: 8 bytes of little-endian header
// length, then that many bytes of JSON mapping each tensor's name to its dtype, shape and
// data_offsets (begin and end inside the data that follows the header), plus an optional
// `__metadata__` object. So a model of any size is described by reading a few kilobytes.
// readSafetensorsHeader throws accel::UsageError naming the file and the byte offset of the
// problem: a file shorter than 8 bytes or than the length it states, a header that is not JSON
// or not a safetensors header, an unknown dtype, a shape whose size disagrees with its offsets,
// offsets past the end of the file or overlapping another tensor's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace accel {

// How a dtype's elements are counted in Accelerate's figures (lib/model/memory_estimate.h).
enum class DtypeKind { Float, Integer, Bool, Complex };

struct Dtype {
  const char* name;  // as safetensors writes it: "F32", "BF16", "I64", "F8_E4M3", …
  int bits;          // per element as stored (BOOL is stored as one byte)
  DtypeKind kind;
};

// The dtype named `name`, or nullptr when safetensors has no such dtype.
const Dtype* findDtype(std::string_view name);
// Every dtype's name, in the table's order, for error hints.
std::string knownDtypeNames();

struct TensorEntry {
  std::string name;
  const Dtype* dtype = nullptr;
  std::vector<uint64_t> shape;
  uint64_t elements = 0;  // the product of shape (1 for a scalar)
  uint64_t begin = 0;     // data_offsets, relative to the end of the header
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::string path;
  uint64_t file_size = 0;
  uint64_t header_length = 0;        // the JSON's bytes; the data starts at 8 + header_length
  std::vector<TensorEntry> tensors;  // sorted by name
  nlohmann::json metadata;           // `__metadata__`, or null
};

// The largest header accepted, as the safetensors library limits it: a longer one is a damaged
// or foreign file, and reading it whole would cost memory for nothing.
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

SafetensorsHeader readSafetensorsHeader(const std::string& path);

}  // namespace accel
