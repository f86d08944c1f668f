// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/log_collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace accel::launch::supervise {

std::string safeHostName(const std::string& host) {
  std::string out;
  for (char c : host.substr(0, 64)) {
    const bool kept =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    out += kept ? c : '_';
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out.empty() ? "host" : out;
}

LogCollector::~LogCollector() {
  for (const auto& [key, fd] : files_) {
    if (fd >= 0) ::close(fd);
  }
}

void LogCollector::failed(const std::string& path, int error) {
  if (said_) return;
  said_ = true;
  say_(
      fmt::format("warning: the other machines' logs cannot be written in this machine's --log_dir ({}: {}); "
                  "they stay in each machine's own --log_dir, and the job goes on",
                  path, std::strerror(error)));
}

int LogCollector::fileFor(int machine, const std::string& host, const job::LogChunk& c) {
  const auto key = std::make_tuple(machine, c.round, c.local_rank, c.stream);
  if (const auto it = files_.find(key); it != files_.end()) return it->second;
  const std::string dir =
      fmt::format("{}/machine_{}_{}/attempt_{}/{}", run_dir_, machine, safeHostName(host), c.round, c.local_rank);
  const std::string path = dir + (c.stream == 1 ? "/stdout.log" : "/stderr.log");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const int fd = ec ? -1 : ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) failed(path, ec ? ec.value() : errno);
  files_[key] = fd;
  return fd;
}

void LogCollector::write(int machine, const std::string& host, const job::LogChunk& c) {
  if (run_dir_.empty()) return;
  const int fd = fileFor(machine, host, c);
  if (fd < 0) return;
  std::string text;
  if (c.dropped > 0) {
    text = fmt::format(
        "\n[accel: {} bytes of this stream were not sent here: machine 0 fell behind; machine {}'s "
        "own --log_dir has them]\n",
        c.dropped, machine);
  }
  text += c.data;
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed(fmt::format("{}/machine_{}_{}/…", run_dir_, machine, safeHostName(host)), n < 0 ? errno : ENOSPC);
      ::close(fd);
      files_[std::make_tuple(machine, c.round, c.local_rank, c.stream)] = -1;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace accel::launch::supervise
