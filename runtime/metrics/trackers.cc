// SPDX-License-Identifier: Apache-2.0
#include "runtime/metrics/trackers.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "runtime/metrics/tensorboard_writer.h"
#include "runtime/metrics/tracker.h"

namespace accel {
namespace {

constexpr std::string_view kAcceptedNames = "jsonl, tensorboard, all";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void select(TrackerChoice& choice, std::string_view name, std::string_view log_with) {
  bool all = name == "all";
  if (!all && name != "jsonl" && name != "tensorboard") {
    throw UsageError(
        fmt::format("unknown tracker \"{}\" in log_with \"{}\" (accepted: {})", name, log_with, kAcceptedNames),
        "accel writes these trackers itself; separate several with commas, e.g. \"tensorboard,jsonl\"");
  }
  choice.jsonl = choice.jsonl || all || name == "jsonl";
  choice.tensorboard = choice.tensorboard || all || name == "tensorboard";
}

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;  // UTF-8 bytes pass through: JSON text is UTF-8
    }
  }
  return out + "\"";
}

std::string jsonValue(const TrackerConfigValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return jsonString(*text);
  double number = std::get<double>(value);
  return std::isfinite(number) ? fmt::format("{}", number) : "null";  // {}: the shortest exact form
}

void createRunDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw Error(fmt::format("cannot create the trackers' directory {}: {}", dir, ec.message()),
                "pick a project_dir in a writable place");
  }
}

void appendLine(const std::string& path, const std::string& line) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  bool ok = file && std::fputs((line + "\n").c_str(), file) >= 0 && std::fflush(file) == 0;
  int error = errno;
  if (file) std::fclose(file);
  if (!ok) {
    throw Error(fmt::format("cannot write the metrics file {}: {}", path, std::strerror(error)),
                "check the free space and permissions of project_dir");
  }
}

}  // namespace

TrackerChoice parseTrackerNames(std::string_view log_with) {
  TrackerChoice choice;
  for (std::string_view rest = log_with;;) {
    size_t comma = rest.find(',');
    std::string_view name = trimmed(rest.substr(0, comma));
    if (!name.empty()) select(choice, name, log_with);
    if (comma == std::string_view::npos) return choice;
    rest.remove_prefix(comma + 1);
  }
}

std::string configJsonLine(const TrackerConfig& config) {
  std::string line = "{\"config\": {";
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (it != config.begin()) line += ", ";
    line += jsonString(it->first) + ": " + jsonValue(it->second);
  }
  return line + "}}";
}

Trackers::Trackers(std::string_view log_with, std::string project_dir)
    : choice_(parseTrackerNames(log_with)), project_dir_(std::move(project_dir)) {}

Trackers::~Trackers() = default;

void Trackers::init(const std::string& project_name, const TrackerConfig& config) {
  if (initialized_) throw Error("the trackers were initialized twice", "call init() once per run");
  if (choice_.jsonl || choice_.tensorboard) openWriters(project_name, config);
  initialized_ = true;  // only once the writers are open: a failed init() may be retried
}

void Trackers::openWriters(const std::string& project_name, const TrackerConfig& config) {
  run_dir_ = (std::filesystem::path(project_dir_) / project_name).string();
  createRunDir(run_dir_);
  if (choice_.tensorboard) tensorboard_ = std::make_unique<TensorBoardWriter>(run_dir_);
  if (choice_.jsonl) {
    std::string path = run_dir_ + "/metrics.jsonl";
    // Before the tracker opens the file, so the config heads this run's lines.
    appendLine(path, configJsonLine(config));
    jsonl_ = std::make_unique<JsonlTracker>(path);
  }
}

void Trackers::log(const std::map<std::string, double>& values, long step) {
  if (!initialized_) throw Error("the trackers logged before init()", "call init(project_name, config) first");
  if (jsonl_) jsonl_->log(values, step);
  if (tensorboard_) tensorboard_->addScalars(values, step);
}

}  // namespace accel
