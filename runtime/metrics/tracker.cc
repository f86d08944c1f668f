// SPDX-License-Identifier: Apache-2.0
#include "runtime/metrics/tracker.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {

JsonlTracker::JsonlTracker(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) {
    throw Error(fmt::format("cannot open the metrics file {}: {}", path, ec ? ec.message() : std::strerror(errno)),
                "pick a --log_file in a writable directory");
  }
}

JsonlTracker::~JsonlTracker() {
  if (file_) std::fclose(file_);
}

void JsonlTracker::log(const std::map<std::string, double>& values, long step) {
  if (!file_) return;
  std::string line = fmt::format("{{\"step\": {}", step);
  for (const auto& [name, value] : values) {
    // JSON has no inf/NaN: write them as null rather than an unreadable line.
    line += fmt::format(", \"{}\": {}", name, std::isfinite(value) ? fmt::format("{:.9g}", value) : "null");
  }
  line += "}\n";
  std::fputs(line.c_str(), file_);
  std::fflush(file_);
}

ProgressBar::ProgressBar(long total_steps, bool force) : total_(total_steps), enabled_(force || ::isatty(2)) {}

void ProgressBar::update(long step, double loss, double samples_per_second) {
  if (!enabled_) return;
  const int width = 30;
  int filled = total_ > 0 ? static_cast<int>(width * step / total_) : 0;
  std::string bar =
      std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.');
  fmt::print(stderr, "\r[{}] {}/{} loss {:.4f} {:.0f} samples/s\x1b[K", bar, step, total_, loss, samples_per_second);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_) fmt::print(stderr, "\n");
}

}  // namespace accel
