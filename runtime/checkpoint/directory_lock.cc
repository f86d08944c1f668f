// SPDX-License-Identifier: Apache-2.0
#include "runtime/checkpoint/directory_lock.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "runtime/state/runtime_settings.h"

namespace accel {

namespace {

constexpr const char* kLockName = ".accel-lock";

std::string runId() {
  const std::string id = readRuntimeSettings().run_id;
  return id.empty() ? "(none: not started by a launcher)" : id;
}

std::string nowUtc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// What the holder wrote: "key value" lines.
std::map<std::string, std::string> readHolder(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  std::map<std::string, std::string> out;
  for (const auto& line : split(text, '\n')) {
    const auto space = line.find(' ');
    if (space != std::string::npos) out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

std::string refusal(const std::string& dir, const std::string& path, int fd) {
  auto h = readHolder(fd);
  auto get = [&](const char* key) { return h.count(key) ? h[key] : std::string("?"); };
  return fmt::format(
      "checkpoint directory {} is in use by another job: run {}, pid {} on host {}, since {} (lock file {})", dir,
      get("run"), get("pid"), get("host"), get("since"), path);
}

// Whether the holder is a rank of this same run: an earlier round's, still stopping.
bool sameRun(int fd) {
  const std::string id = readRuntimeSettings().run_id;
  auto h = readHolder(fd);
  return !id.empty() && h.count("run") && h["run"] == id;
}

// flock's answer, having waited kEarlierRoundLockWait for an earlier round of this run to let go.
int lockOrWait(int fd) {
  int rc = ::flock(fd, LOCK_EX | LOCK_NB);
  if (rc == 0 || errno != EWOULDBLOCK || !sameRun(fd)) return rc;
  const auto deadline = std::chrono::steady_clock::now() + defaults::kEarlierRoundLockWait;
  while (rc != 0 && errno == EWOULDBLOCK && std::chrono::steady_clock::now() < deadline) {
    ::poll(nullptr, 0, 100);
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  }
  return rc;
}

void describeHolder(int fd) {
  const std::string text =
      fmt::format("run {}\npid {}\nhost {}\nsince {}\n", runId(), ::getpid(), hostName(), nowUtc());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    // The lock holds all the same; a refused job's message then shows "?" for the holder.
  }
}

}  // namespace

std::string lockCheckpointDirectory(const std::string& dir) {
  static std::mutex mutex;
  static auto* held = new std::map<std::string, int>;  // never freed: the locks live as long as the process
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("cannot create checkpoint directory {}: {}", dir, ec.message()));
  const std::string key = std::filesystem::weakly_canonical(dir, ec).string();
  std::lock_guard<std::mutex> lock(mutex);
  if (held->count(key)) return "";
  const std::string path = dir + "/" + kLockName;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot open checkpoint lock {}: {}", path, std::strerror(errno)));
  if (lockOrWait(fd) != 0) {
    const int err = errno;
    std::string message =
        err == EWOULDBLOCK ? refusal(dir, path, fd) : fmt::format("cannot lock {}: {}", path, std::strerror(err));
    ::close(fd);
    if (err != EWOULDBLOCK) throw Error(message);
    return message;
  }
  describeHolder(fd);
  (*held)[key] = fd;
  return "";
}

}  // namespace accel
