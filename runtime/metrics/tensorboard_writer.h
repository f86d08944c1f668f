// SPDX-License-Identifier: Apache-2.0
// TensorBoard event files written by hand, with neither protobuf nor TensorFlow: a directory gets
// events.out.tfevents.<unix seconds>.<hostname>, a sequence of TFRecords (uint64 length, masked
// CRC-32C of the length, the bytes, masked CRC-32C of the bytes; all little-endian) each holding
// a serialized tensorflow.Event. The first event carries file_version "brain.Event:2"; then each
// scalar is one Event {wall_time, step, summary {value {tag, simple_value}}}, which TensorBoard
// and its EventAccumulator read as they read torch's SummaryWriter. Each call is flushed, so a
// killed run keeps what it logged; a failed write throws accel::Error naming the file. Not
// thread-safe. Each writer has a file of its own: one opened in a directory where that name
// exists (same second, same host) takes the name with the first free ".N" after it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace accel {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord frames.
uint32_t crc32c(std::string_view bytes);

// TFRecord's stored form of a CRC: rotated and offset, so that the CRC of bytes that themselves
// hold CRCs does not degenerate.
uint32_t maskedCrc32c(std::string_view bytes);

class TensorBoardWriter {
 public:
  // Creates `dir` with its parents and a new event file in it holding the file_version event.
  explicit TensorBoardWriter(const std::string& dir);
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One scalar Event per value (its name is the tag) at `step`, then a flush.
  void addScalars(const std::map<std::string, double>& values, long step);
  void addScalar(const std::string& tag, double value, long step);
  // The event file's path.
  const std::string& path() const { return path_; }

 private:
  void writeRecord(std::string_view event);
  void appendScalar(const std::string& tag, double value, long step);
  void flush();
  [[noreturn]] void fail(std::string_view what) const;

  struct CloseFile {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, CloseFile> file_;  // closed also when the constructor throws
};

}  // namespace accel
