// SPDX-License-Identifier: Apache-2.0
// Test support: safetensors files written byte by byte (8-byte little-endian header length, the
// JSON header, then the data), so tests need no Python. The data is left as a hole
// (ftruncate), so a file claiming tens of gigabytes costs no disk.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace accel::test {

struct FakeTensor {
  std::string name;
  std::string dtype;  // F32, F16, BF16, I64, I32, I8, U8, BOOL
  std::vector<uint64_t> shape;
};

inline uint64_t fakeTensorBytes(const FakeTensor& t) {
  uint64_t n = 1;
  for (uint64_t d : t.shape) n *= d;
  const std::string& d = t.dtype;
  int size = d == "F32" || d == "I32"                  ? 4
             : d == "F16" || d == "BF16" || d == "I16" ? 2
             : d == "I64" || d == "F64"                ? 8
                                                       : 1;
  return n * static_cast<uint64_t>(size);
}

// The header for `tensors`, laid out one after another in the given order.
inline nlohmann::json fakeHeader(const std::vector<FakeTensor>& tensors, uint64_t* data_size = nullptr) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    uint64_t end = offset + fakeTensorBytes(t);
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, end}}};
    offset = end;
  }
  if (data_size) *data_size = offset;
  return header;
}

// Writes the length, `header_text`, and a hole of `data_size` bytes.
inline void writeRawSafetensors(const std::string& path, const std::string& header_text, uint64_t data_size) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    uint64_t n = header_text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << header_text;
  }
  if (::truncate(path.c_str(), static_cast<off_t>(8 + header_text.size() + data_size)) != 0) {
    throw std::runtime_error("cannot size " + path);
  }
}

inline void writeSafetensors(const std::string& path, const std::vector<FakeTensor>& tensors,
                             const nlohmann::json& metadata = nullptr) {
  uint64_t data_size = 0;
  nlohmann::json header = fakeHeader(tensors, &data_size);
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  writeRawSafetensors(path, header.dump(), data_size);
}

}  // namespace accel::test
