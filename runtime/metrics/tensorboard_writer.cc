// SPDX-License-Identifier: Apache-2.0
#include "runtime/metrics/tensorboard_writer.h"

#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {
namespace {

constexpr std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kCrcTable = makeCrcTable();

// Protocol buffer wire types of the fields an Event uses.
enum Wire : uint32_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

// tensorflow.Event's and Summary's field numbers (tensorflow/core/util/event.proto, summary.proto).
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2;

void putVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void putKey(std::string& out, uint32_t field, Wire wire) { putVarint(out, (field << 3) | wire); }

// Little-endian whatever the host's order, as the wire format and TFRecord framing require.
void putLittleEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void putBytesField(std::string& out, uint32_t field, std::string_view bytes) {
  putKey(out, field, LengthDelimited);
  putVarint(out, bytes.size());
  out += bytes;
}

// The fields every Event starts with: wall_time, then step (written even when 0; readers accept it).
std::string eventStart(long step) {
  double wall_time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string event;
  putKey(event, kEventWallTime, Fixed64);
  putLittleEndian(event, std::bit_cast<uint64_t>(wall_time), 8);
  putKey(event, kEventStep, Varint);
  // int64 as protobuf encodes it: a negative step is its two's complement, all ten varint bytes.
  putVarint(event, static_cast<uint64_t>(static_cast<int64_t>(step)));
  return event;
}

std::string scalarEvent(const std::string& tag, double value, long step) {
  std::string summary_value;
  putBytesField(summary_value, kValueTag, tag);
  putKey(summary_value, kValueSimpleValue, Fixed32);
  putLittleEndian(summary_value, std::bit_cast<uint32_t>(static_cast<float>(value)), 4);
  std::string summary;
  putBytesField(summary, kSummaryValue, summary_value);
  std::string event = eventStart(step);
  putBytesField(event, kEventSummary, summary);
  return event;
}

std::string versionEvent() {
  std::string event = eventStart(0);
  putBytesField(event, kEventFileVersion, "brain.Event:2");
  return event;
}

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// A new file (never another writer's): the conventional name, else the first free `.N` after it.
std::FILE* openNewEventFile(const std::string& dir, std::string& path) {
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  std::string base = fmt::format("{}/events.out.tfevents.{}.{}", dir, seconds.count(), hostName());
  for (int n = 0;; ++n) {
    path = n == 0 ? base : fmt::format("{}.{}", base, n);
    if (std::FILE* file = std::fopen(path.c_str(), "wbx")) return file;
    if (errno != EEXIST) return nullptr;
  }
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : bytes) crc = kCrcTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint32_t maskedCrc32c(std::string_view bytes) {
  uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw Error(fmt::format("cannot create the TensorBoard directory {}: {}", dir, ec.message()),
                "pick a project_dir in a writable place");
  }
  file_.reset(openNewEventFile(dir, path_));
  if (!file_) fail("cannot create the TensorBoard event file");
  writeRecord(versionEvent());
  flush();
}

void TensorBoardWriter::addScalars(const std::map<std::string, double>& values, long step) {
  for (const auto& [tag, value] : values) appendScalar(tag, value, step);
  flush();
}

void TensorBoardWriter::addScalar(const std::string& tag, double value, long step) {
  appendScalar(tag, value, step);
  flush();
}

void TensorBoardWriter::appendScalar(const std::string& tag, double value, long step) {
  writeRecord(scalarEvent(tag, value, step));
}

void TensorBoardWriter::writeRecord(std::string_view event) {
  std::string length;
  putLittleEndian(length, event.size(), 8);
  std::string record = length;
  putLittleEndian(record, maskedCrc32c(length), 4);
  record += event;
  putLittleEndian(record, maskedCrc32c(event), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_.get()) != record.size()) fail("cannot write");
}

void TensorBoardWriter::flush() {
  if (std::fflush(file_.get()) != 0) fail("cannot write");
}

void TensorBoardWriter::fail(std::string_view what) const {
  throw Error(fmt::format("{} {}: {}", what, path_, std::strerror(errno)),
              "check the free space and permissions of the TensorBoard directory");
}

}  // namespace accel
