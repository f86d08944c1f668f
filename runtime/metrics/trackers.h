// SPDX-License-Identifier: Apache-2.0
// Accelerate's experiment trackers (`Accelerator(log_with=..., project_dir=...)`,
// `init_trackers(project_name, config)`, `log(values, step)`) for the trackers accel writes
// itself: "tensorboard" (event files, tensorboard_writer.h) and "jsonl" (tracker.h), or "all".
// init() puts both under <project_dir>/<project_name>/, as Accelerate's TensorBoard tracker puts
// its run in logging_dir/run_name: the event files directly, the JSON lines in metrics.jsonl,
// whose run starts with one {"config": {...}} line. The caller decides who logs, and it should be
// the main process only (the Accelerator's isMainProcess()): every rank writing would interleave
// duplicate lines and event files. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace accel {

class JsonlTracker;
class TensorBoardWriter;

// The writers a log_with list selects.
struct TrackerChoice {
  bool jsonl = false;
  bool tensorboard = false;
};

// "tensorboard,jsonl", "all", "jsonl" (names separated by commas, spaces around them ignored;
// "" selects none, as log_with=None). An unknown name throws UsageError (exit 2) naming it and
// the accepted names.
TrackerChoice parseTrackerNames(std::string_view log_with);

// A hyperparameter of the run's config: a number or a text.
using TrackerConfigValue = std::variant<double, std::string>;
using TrackerConfig = std::map<std::string, TrackerConfigValue>;

class Trackers {
 public:
  // Checks the names now, so a misspelled tracker fails before any training; creates nothing.
  Trackers(std::string_view log_with, std::string project_dir);
  ~Trackers();
  Trackers(const Trackers&) = delete;
  Trackers& operator=(const Trackers&) = delete;

  // Creates <project_dir>/<project_name>/ and opens the selected writers there; the JSON lines
  // file is appended to, after the config line. Throws accel::Error when a directory or file
  // cannot be made, and when called twice.
  void init(const std::string& project_name, const TrackerConfig& config = {});
  // Each value under its name at `step`, to every selected writer, flushed. Throws before init().
  void log(const std::map<std::string, double>& values, long step);

  const TrackerChoice& choice() const { return choice_; }
  // <project_dir>/<project_name> once init() has opened a writer there, else "".
  const std::string& runDir() const { return run_dir_; }

 private:
  void openWriters(const std::string& project_name, const TrackerConfig& config);

  TrackerChoice choice_;
  std::string project_dir_;
  std::string run_dir_;
  bool initialized_ = false;
  std::unique_ptr<JsonlTracker> jsonl_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
};

// The config as one JSON line, {"config": {"name": value, ...}}: numbers that are not finite
// become null (JSON has no inf or NaN).
std::string configJsonLine(const TrackerConfig& config);

}  // namespace accel
