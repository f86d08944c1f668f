// SPDX-License-Identifier: Apache-2.0
// TensorBoard event files and the log_with trackers: CRC-32C against its published vectors, the
// TFRecord framing and Event fields of a written file parsed back here (TensorBoard's own reader
// runs in tests/peers/check_tensorboard.py), and the trackers' names, directories and files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <bit>
#include <cstring>
#include <filesystem>

#include "lib/common/error.h"
#include "runtime/metrics/tensorboard_writer.h"
#include "runtime/metrics/trackers.h"
#include "tests/support/process.h"

using namespace accel;
using accel::test::contains;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

uint64_t littleEndian(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

// Splits a TFRecord file into its records, checking each length and CRC on the way.
std::vector<std::string> readRecords(const std::string& path) {
  std::string data = slurp(path);
  std::vector<std::string> records;
  size_t at = 0;
  while (at < data.size()) {
    REQUIRE(data.size() - at >= 12);
    std::string_view length_bytes(data.data() + at, 8);
    CHECK(littleEndian(std::string_view(data.data() + at + 8, 4)) == maskedCrc32c(length_bytes));
    uint64_t length = littleEndian(length_bytes);
    REQUIRE(data.size() - at - 12 >= length + 4);
    std::string_view record(data.data() + at + 12, length);
    CHECK(littleEndian(std::string_view(data.data() + at + 12 + length, 4)) == maskedCrc32c(record));
    records.emplace_back(record);
    at += 12 + length + 4;
  }
  return records;
}

// The protocol buffer fields of one message: field number -> raw value (varints decoded, fixed
// fields as their little-endian integer, length-delimited fields as their bytes).
struct Field {
  uint64_t number = 0;
  std::string bytes;
};

uint64_t readVarint(std::string_view& in) {
  uint64_t v = 0;
  for (int shift = 0; !in.empty(); shift += 7) {
    auto b = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  FAIL("a varint runs past the message's end");
  return v;
}

std::map<uint32_t, Field> parseMessage(std::string_view in) {
  std::map<uint32_t, Field> fields;
  while (!in.empty()) {
    uint64_t key = readVarint(in);
    Field& f = fields[static_cast<uint32_t>(key >> 3)];
    size_t size = 0;
    switch (key & 7) {
      case 0: f.number = readVarint(in); continue;
      case 1: size = 8; break;
      case 2: size = readVarint(in); break;
      case 5: size = 4; break;
      default: FAIL("wire type " << (key & 7));
    }
    REQUIRE(in.size() >= size);
    f.bytes = std::string(in.substr(0, size));
    f.number = (key & 7) == 2 ? 0 : littleEndian(f.bytes);
    in.remove_prefix(size);
  }
  return fields;
}

struct Scalar {
  std::string tag;
  float value;
  long step;
};

Scalar parseScalarEvent(const std::string& event) {
  auto fields = parseMessage(event);
  auto summary = parseMessage(fields.at(5).bytes);
  auto value = parseMessage(summary.at(1).bytes);
  return {value.at(1).bytes, std::bit_cast<float>(static_cast<uint32_t>(value.at(2).number)),
          static_cast<long>(fields.at(2).number)};
}

std::vector<std::string> eventFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (contains(entry.path().filename().string(), "tfevents")) files.push_back(entry.path().string());
  }
  return files;
}

}  // namespace

TEST_CASE("tensorboard: CRC-32C matches its published check values", "[tensorboard]") {
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c("") == 0u);
  CHECK(crc32c(std::string(32, '\0')) == 0x8A9136AAu);  // RFC 3720, B.4: 32 bytes of zeros
  CHECK(crc32c(std::string(32, '\xff')) == 0x62A8AB43u);
  uint32_t crc = 0xE3069283u;
  CHECK(maskedCrc32c("123456789") == ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

TEST_CASE("tensorboard: an event file is framed records of a version event, then scalar events", "[tensorboard]") {
  TempDir dir;
  std::string run = dir.file("a/b/run");  // parents created
  std::string path;
  {
    TensorBoardWriter writer(run);
    path = writer.path();
    writer.addScalars({{"loss", 0.25}, {"lr", -1e-30}}, 0);
    writer.addScalar("loss", 3e38, 1L << 40);
    writer.addScalar("loss", 1.5, -3);
  }
  std::string name = std::filesystem::path(path).filename().string();
  CHECK(std::filesystem::path(path).parent_path() == run);
  CHECK(name.rfind("events.out.tfevents.", 0) == 0);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  CHECK(name.size() > std::strlen(host));
  CHECK(name.substr(name.size() - std::strlen(host)) == host);

  auto records = readRecords(path);
  REQUIRE(records.size() == 5);
  auto version = parseMessage(records[0]);
  CHECK(version.at(3).bytes == "brain.Event:2");
  double wall_time = std::bit_cast<double>(version.at(1).number);
  CHECK(wall_time > 1.7e9);
  CHECK(wall_time < 1e10);
  std::vector<Scalar> want = {{"loss", 0.25f, 0}, {"lr", -1e-30f, 0}, {"loss", 3e38f, 1L << 40}, {"loss", 1.5f, -3}};
  for (size_t i = 0; i < want.size(); ++i) {
    Scalar got = parseScalarEvent(records[i + 1]);
    INFO("scalar " << i);
    CHECK(got.tag == want[i].tag);
    CHECK(got.value == want[i].value);
    CHECK(got.step == want[i].step);
  }
}

TEST_CASE("tensorboard: two writers in one directory never share a file", "[tensorboard]") {
  TempDir dir;
  TensorBoardWriter first(dir.path());
  TensorBoardWriter second(dir.path());
  CHECK(first.path() != second.path());
  CHECK(eventFiles(dir.path()).size() == 2);
}

TEST_CASE("trackers: log_with names as Accelerate takes them, an unknown one is refused", "[tensorboard][trackers]") {
  auto both = parseTrackerNames(" tensorboard , jsonl");
  CHECK((both.jsonl && both.tensorboard));
  auto all = parseTrackerNames("all");
  CHECK((all.jsonl && all.tensorboard));
  auto tensorboard = parseTrackerNames("tensorboard");
  CHECK((!tensorboard.jsonl && tensorboard.tensorboard));
  auto none = parseTrackerNames("");
  CHECK((!none.jsonl && !none.tensorboard));
  try {
    Trackers trackers("tensorboard,wandb", "/nonexistent");
    FAIL("an unknown tracker was accepted");
  } catch (const Error& e) {
    CHECK(e.status() == ExitStatus::Usage);
    CHECK(contains(e.what(), "unknown tracker \"wandb\""));
    CHECK(contains(e.what(), "jsonl, tensorboard, all"));
  }
}

TEST_CASE("trackers: a directory that cannot be created is named with the reason", "[tensorboard][trackers]") {
  TempDir dir;
  std::string blocked = dir.write("file", "a file, not a folder") + "/run";
  try {
    TensorBoardWriter writer(blocked);
    FAIL("a writer was made under a file");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "cannot create the TensorBoard directory " + blocked + ": Not a directory"));
  }
  Trackers trackers("all", dir.file("file"));
  try {
    trackers.init("project");
    FAIL("trackers were made under a file");
  } catch (const Error& e) {
    CHECK(
        contains(e.what(), "cannot create the trackers' directory " + dir.file("file/project") + ": Not a directory"));
  }
}

TEST_CASE("trackers: init puts the run in project_dir/project_name, the config heading the JSON lines",
          "[tensorboard][trackers]") {
  TempDir dir;
  Trackers trackers("jsonl,tensorboard", dir.file("logs"));
  CHECK_THROWS_WITH(trackers.log({{"loss", 1.0}}, 0), Catch::Contains("before init()"));
  trackers.init("demo", {{"lr", 0.001}, {"model", std::string("mlp \"small\"")}, {"bad", 1.0 / 0.0}});
  CHECK(trackers.runDir() == dir.file("logs/demo"));
  trackers.log({{"loss", 0.5}, {"lr", 0.001}}, 0);
  trackers.log({{"loss", 0.25}}, 1);
  CHECK_THROWS_WITH(trackers.init("demo"), Catch::Contains("initialized twice"));
  CHECK(slurp(dir.file("logs/demo/metrics.jsonl")) ==
        "{\"config\": {\"bad\": null, \"lr\": 0.001, \"model\": \"mlp \\\"small\\\"\"}}\n"
        "{\"step\": 0, \"loss\": 0.5, \"lr\": 0.001}\n"
        "{\"step\": 1, \"loss\": 0.25}\n");
  auto files = eventFiles(dir.file("logs/demo"));
  REQUIRE(files.size() == 1);
  CHECK(readRecords(files[0]).size() == 4);  // the version event and three scalars
}

TEST_CASE("trackers: none selected writes nothing", "[tensorboard][trackers]") {
  TempDir dir;
  Trackers trackers("", dir.file("logs"));
  trackers.init("demo", {{"lr", 0.1}});
  trackers.log({{"loss", 1.0}}, 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("logs")));
}
