// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/log_layout.h"

#include <string.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/random_bytes.h"

namespace accel::launch::supervise {

namespace fs = std::filesystem;

namespace {

// tempfile.mkdtemp's alphabet and length, so the folder looks as torchrun's does.
constexpr std::string_view kRandomChars = "abcdefghijklmnopqrstuvwxyz0123456789_";
constexpr int kRandomLength = 8;
constexpr int kTries = 100;  // mkdtemp's own bound on names already taken

}  // namespace

std::string makeRunLogDir(const std::string& log_dir, const std::string& run_id) {
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  if (ec) throw Error(fmt::format("cannot create --log_dir {}: {}", log_dir, ec.message()));
  std::string prefix = run_id + "_";
  for (char& c : prefix) c = c == '/' ? '_' : c;  // a run id is a name, never a path
  for (int attempt = 0; attempt < kTries; ++attempt) {
    std::string name = prefix;
    for (int i = 0; i < kRandomLength; ++i) name += kRandomChars[randomU64() % kRandomChars.size()];
    const std::string path = (fs::path(log_dir) / name).string();
    if (::mkdir(path.c_str(), 0700) == 0) return path;  // 0700: mkdtemp's mode
    if (errno != EEXIST) throw Error(fmt::format("cannot make the log folder {}: {}", path, ::strerror(errno)));
  }
  throw Error(fmt::format("cannot make a log folder {}XXXXXXXX in {}: every name tried is taken", prefix, log_dir));
}

std::string rankLogDir(const std::string& run_dir, int round, int local_rank) {
  return fmt::format("{}/attempt_{}/{}", run_dir, round, local_rank);
}

std::string startRankLogs(const plan::LaunchPlan& plan) {
  const std::string dir = fs::path(plan.rank_log_prefix).parent_path().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("unable to create directory {} for each rank log: {}", dir, ec.message()));
  return fmt::format("worker logs: {}<rank>.log (stdout and stderr)", plan.rank_log_prefix);
}

std::string startRunLogs(const plan::LaunchPlan& plan, ErrorFiles& error_files, std::string& run_dir) {
  run_dir = makeRunLogDir(plan.log_dir, plan.run_id);
  error_files.keepIn(run_dir);
  return fmt::format("worker logs: {}/attempt_<restart>/<local rank>/stdout.log, stderr.log, error.json", run_dir);
}

}  // namespace accel::launch::supervise
