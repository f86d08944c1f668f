// SPDX-License-Identifier: Apache-2.0
// lib/model/safetensors_header.h on files written byte by byte: what a good header gives, and
// each malformed file's error naming the file and the byte offset of the problem.
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/model/safetensors_header.h"
#include "tests/support/process.h"
#include "tests/support/safetensors_files.h"

using accel::readSafetensorsHeader;
using accel::UsageError;
using accel::test::FakeTensor;
using accel::test::TempDir;
using accel::test::writeRawSafetensors;
using accel::test::writeSafetensors;
using Catch::Matchers::Contains;

namespace {

std::string errorOf(const std::string& path) {
  try {
    readSafetensorsHeader(path);
  } catch (const UsageError& e) {
    return e.what() + std::string(" | ") + e.hint();
  }
  return "no error";
}

}  // namespace

TEST_CASE("safetensors header: dtypes, shapes, offsets and metadata", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  writeSafetensors(path, {{"a.weight", "F32", {3, 4}}, {"b", "I64", {5}}, {"c", "BF16", {}}}, {{"format", "pt"}});
  auto h = readSafetensorsHeader(path);
  REQUIRE(h.tensors.size() == 3);
  CHECK(h.tensors[0].name == "a.weight");
  CHECK(std::string(h.tensors[0].dtype->name) == "F32");
  CHECK(h.tensors[0].shape == std::vector<uint64_t>{3, 4});
  CHECK(h.tensors[0].elements == 12);
  CHECK(h.tensors[0].end - h.tensors[0].begin == 48);
  CHECK(h.tensors[1].elements == 5);
  CHECK(h.tensors[2].elements == 1);  // a scalar
  CHECK(h.metadata["format"] == "pt");
  CHECK(h.file_size == 8 + h.header_length + 48 + 40 + 2);
}

TEST_CASE("safetensors header: a truncated file names its size and where the header should end", "[safetensors]") {
  TempDir dir;
  const std::string short_file = dir.write("short.safetensors", "abcde");
  CHECK_THAT(errorOf(short_file), Contains(short_file + ": byte 5: truncated: 5 bytes, shorter than the 8-byte"));
  const std::string cut = dir.file("cut.safetensors");
  writeRawSafetensors(cut, "{\"a\": {}}", 0);
  std::string whole = accel::test::slurp(cut);
  { std::ofstream(cut, std::ios::binary | std::ios::trunc) << whole.substr(0, 12); }
  CHECK_THAT(errorOf(cut), Contains(cut + ": byte 12: truncated: the header length at byte 0 says the header ends "
                                          "at byte 17, the file ends at byte 12"));
}

TEST_CASE("safetensors header: not JSON, or not a safetensors header, at its byte", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  writeRawSafetensors(path, "{\"a\": nope}", 0);
  CHECK_THAT(errorOf(path), Contains(path + ": byte 15: the header is not JSON: "));
  writeRawSafetensors(path, "[1, 2]", 0);
  CHECK_THAT(errorOf(path), Contains(path + ": byte 8: the header is not a JSON object of tensors"));
  writeRawSafetensors(path, R"({"x": {"dtype": "F32", "shape": [1]}})", 4);
  CHECK_THAT(errorOf(path), Contains(path + ": byte 9: tensor 'x': no 'data_offsets'"));
  writeRawSafetensors(path, R"({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4);
  CHECK_THAT(errorOf(path), Contains("tensor 'x': shape holds -1, not a non-negative integer"));
  writeRawSafetensors(path, R"({"__metadata__": 3})", 0);
  CHECK_THAT(errorOf(path), Contains(path + ": byte 9: __metadata__ is not an object"));
}

TEST_CASE("safetensors header: an unknown dtype lists the known ones", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("dtype.safetensors");
  writeRawSafetensors(
      path,
      R"({"ok": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},  "w": {"dtype": "F33", "shape": [1], "data_offsets": [4, 8]}})",
      8);
  std::string error = errorOf(path);
  CHECK_THAT(error, Contains(path + ": byte 72: tensor 'w': unknown dtype \"F33\""));
  CHECK_THAT(error, Contains("safetensors dtypes: BOOL, U8, I8, F8_E5M2, F8_E4M3"));
}

TEST_CASE("safetensors header: data_offsets past the file, overlapping, or of the wrong size", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.file("offsets.safetensors");
  const std::string past = R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})";
  writeRawSafetensors(path, past, 12);
  CHECK_THAT(errorOf(path), Contains(path + ": byte 9: tensor 'w': data_offsets [0, 16] end at file byte " +
                                     std::to_string(8 + past.size() + 16) + ", past the file's end at byte " +
                                     std::to_string(8 + past.size() + 12)));
  writeRawSafetensors(path,
                      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                      R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                      12);
  CHECK_THAT(errorOf(path), Contains("tensor 'b': data_offsets [4, 12] overlap those of 'a' [0, 8]"));
  writeRawSafetensors(path, R"({"w": {"dtype": "F16", "shape": [3], "data_offsets": [0, 8]}})", 8);
  CHECK_THAT(errorOf(path), Contains("tensor 'w': data_offsets [0, 8] hold 8 bytes, but F16 of shape [3] needs 6"));
  writeRawSafetensors(path, R"({"w": {"dtype": "F16", "shape": [0], "data_offsets": [8, 0]}})", 8);
  CHECK_THAT(errorOf(path), Contains("end before they begin"));
}
