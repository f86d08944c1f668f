// SPDX-License-Identifier: Apache-2.0
#include "lib/model/safetensors_header.h"

#include <algorithm>
#include <array>
#include <fstream>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {

namespace {

using nlohmann::json;

// The dtypes of the safetensors format; sub-byte floats (F4, F6_*) are packed.
constexpr std::array kDtypes = {
    Dtype{"BOOL", 8, DtypeKind::Bool},     Dtype{"U8", 8, DtypeKind::Integer},    Dtype{"I8", 8, DtypeKind::Integer},
    Dtype{"F8_E5M2", 8, DtypeKind::Float}, Dtype{"F8_E4M3", 8, DtypeKind::Float}, Dtype{"F8_E8M0", 8, DtypeKind::Float},
    Dtype{"I16", 16, DtypeKind::Integer},  Dtype{"U16", 16, DtypeKind::Integer},  Dtype{"F16", 16, DtypeKind::Float},
    Dtype{"BF16", 16, DtypeKind::Float},   Dtype{"I32", 32, DtypeKind::Integer},  Dtype{"U32", 32, DtypeKind::Integer},
    Dtype{"F32", 32, DtypeKind::Float},    Dtype{"F64", 64, DtypeKind::Float},    Dtype{"I64", 64, DtypeKind::Integer},
    Dtype{"U64", 64, DtypeKind::Integer},  Dtype{"C64", 64, DtypeKind::Complex},  Dtype{"F4", 4, DtypeKind::Float},
    Dtype{"F6_E2M3", 6, DtypeKind::Float}, Dtype{"F6_E3M2", 6, DtypeKind::Float},
};

const char* kFormatHint = "a safetensors file is 8 bytes of little-endian header length, then a JSON header";

[[noreturn]] void fail(const std::string& path, uint64_t offset, const std::string& what,
                       const std::string& hint = kFormatHint) {
  throw UsageError(fmt::format("{}: byte {}: {}", path, offset, what), hint);
}

// Where `name`'s key starts in the file, for errors about its entry: the first place its JSON
// spelling is followed by a colon; the header's start when the file spells it otherwise.
uint64_t keyOffset(const std::string& header, const std::string& name) {
  const std::string quoted = json(name).dump();
  for (size_t at = header.find(quoted); at != std::string::npos; at = header.find(quoted, at + 1)) {
    size_t next = header.find_first_not_of(" \t\r\n", at + quoted.size());
    if (next != std::string::npos && header[next] == ':') return 8 + at;
  }
  return 8;
}

uint64_t littleEndian64(const char* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

// nlohmann's parse error without its exception id and line/column (the byte offset replaces them).
std::string jsonProblem(const std::string& what) {
  size_t column = what.rfind("column ");
  size_t colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

struct Reader {
  const SafetensorsHeader& file;
  const std::string& text;

  [[noreturn]] void bad(const std::string& name, const std::string& what) const {
    fail(file.path, keyOffset(text, name), fmt::format("tensor '{}': {}", name, what));
  }

  uint64_t count(const std::string& name, const json& v, const char* field) const {
    if (!v.is_number_unsigned()) bad(name, fmt::format("{} holds {}, not a non-negative integer", field, v.dump()));
    return v.get<uint64_t>();
  }

  TensorEntry entry(const std::string& name, const json& v) const {
    if (!v.is_object()) bad(name, "not an object with dtype, shape and data_offsets");
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
      if (!v.contains(field)) bad(name, fmt::format("no '{}'", field));
    }
    TensorEntry t;
    t.name = name;
    const json& dtype = v["dtype"];
    if (!dtype.is_string() || !(t.dtype = findDtype(dtype.get<std::string>()))) {
      fail(file.path, keyOffset(text, name), fmt::format("tensor '{}': unknown dtype {}", name, dtype.dump()),
           "safetensors dtypes: " + knownDtypeNames());
    }
    if (!v["shape"].is_array()) bad(name, "shape is not a list");
    t.elements = 1;
    for (const json& d : v["shape"]) {
      t.shape.push_back(count(name, d, "shape"));
      if (__builtin_mul_overflow(t.elements, t.shape.back(), &t.elements)) bad(name, "shape's size overflows");
    }
    const json& offsets = v["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2) bad(name, "data_offsets is not [begin, end]");
    t.begin = count(name, offsets[0], "data_offsets");
    t.end = count(name, offsets[1], "data_offsets");
    return t;
  }

  void checkExtent(const TensorEntry& t) const {
    uint64_t bits = 0;
    if (__builtin_mul_overflow(t.elements, static_cast<uint64_t>(t.dtype->bits), &bits)) {
      bad(t.name, "shape's size overflows");
    }
    const uint64_t bytes = bits / 8 + (bits % 8 != 0);
    if (t.end < t.begin) bad(t.name, fmt::format("data_offsets [{}, {}] end before they begin", t.begin, t.end));
    if (bytes != t.end - t.begin) {
      bad(t.name, fmt::format("data_offsets [{}, {}] hold {} bytes, but {} of shape [{}] needs {}", t.begin, t.end,
                              t.end - t.begin, t.dtype->name, fmt::join(t.shape, ", "), bytes));
    }
    uint64_t data = file.file_size - 8 - file.header_length;
    if (t.end > data) {
      bad(t.name, fmt::format("data_offsets [{}, {}] end at file byte {}, past the file's end at byte {}", t.begin,
                              t.end, 8 + file.header_length + t.end, file.file_size));
    }
  }
};

void checkOverlaps(const SafetensorsHeader& file, const std::string& text) {
  std::vector<const TensorEntry*> order;
  for (const auto& t : file.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    const TensorEntry& a = *order[i - 1];
    const TensorEntry& b = *order[i];
    if (b.begin < a.end) {
      fail(file.path, keyOffset(text, b.name),
           fmt::format("tensor '{}': data_offsets [{}, {}] overlap those of '{}' [{}, {}]", b.name, b.begin, b.end,
                       a.name, a.begin, a.end));
    }
  }
}

std::string readHeaderText(std::ifstream& in, SafetensorsHeader& file) {
  char length[8];
  if (file.file_size < 8 || !in.read(length, 8)) {
    fail(file.path, file.file_size,
         fmt::format("truncated: {} bytes, shorter than the 8-byte header length", file.file_size));
  }
  file.header_length = littleEndian64(length);
  if (file.header_length > kMaxSafetensorsHeader) {
    fail(file.path, 0,
         fmt::format("header length {} is over the {} bytes safetensors allows", file.header_length,
                     kMaxSafetensorsHeader));
  }
  if (8 + file.header_length > file.file_size) {
    fail(file.path, file.file_size,
         fmt::format("truncated: the header length at byte 0 says the header ends at byte {}, the file ends at "
                     "byte {}",
                     8 + file.header_length, file.file_size));
  }
  std::string text(file.header_length, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size()))) fail(file.path, 8, "cannot read the header");
  return text;
}

}  // namespace

const Dtype* findDtype(std::string_view name) {
  for (const Dtype& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string knownDtypeNames() {
  std::vector<std::string> names;
  for (const Dtype& d : kDtypes) names.emplace_back(d.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

SafetensorsHeader readSafetensorsHeader(const std::string& path) {
  SafetensorsHeader file;
  file.path = path;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw UsageError(path + ": cannot open", "check the path and its permissions");
  file.file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  const std::string text = readHeaderText(in, file);
  json header;
  try {
    header = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(path, 8 + (e.byte > 0 ? e.byte - 1 : 0), "the header is not JSON: " + jsonProblem(e.what()));
  }
  if (!header.is_object()) fail(path, 8, "the header is not a JSON object of tensors");
  Reader reader{file, text};
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail(path, keyOffset(text, name), "__metadata__ is not an object");
      file.metadata = value;
      continue;
    }
    file.tensors.push_back(reader.entry(name, value));
    reader.checkExtent(file.tensors.back());
  }
  checkOverlaps(file, text);
  return file;
}

}  // namespace accel
