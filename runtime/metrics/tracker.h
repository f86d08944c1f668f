// SPDX-License-Identifier: Apache-2.0
// Training metrics: log({name: value}, step) appends one JSON object per line to a file (the
// JSON-lines equivalent of Accelerate's log_with trackers), and a one-line progress bar with
// loss and throughput on the console when it is a terminal. Write on the main process only
// (the Accelerator's isMainProcess()); not thread-safe.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

namespace accel {

class JsonlTracker {
 public:
  // Appends to `path` (created with parents; "" disables the file).
  explicit JsonlTracker(const std::string& path);
  ~JsonlTracker();
  JsonlTracker(const JsonlTracker&) = delete;
  JsonlTracker& operator=(const JsonlTracker&) = delete;
  // {"step": step, name: value, …} as one line, flushed.
  void log(const std::map<std::string, double>& values, long step);

 private:
  std::FILE* file_ = nullptr;
};

class ProgressBar {
 public:
  // Draws on stderr only when it is a terminal (or `force`).
  explicit ProgressBar(long total_steps, bool force = false);
  // Redraws "[####....] step/total loss 0.123 1234 samples/s" in place.
  void update(long step, double loss, double samples_per_second);
  void finish();
  bool enabled() const { return enabled_; }

 private:
  long total_;
  bool enabled_;
};

}  // namespace accel
