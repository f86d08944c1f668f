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

void LogCollector::failed(const std::string& path, int error) {
  if (said_) return;
  said_ = true;
  say_(
      fmt::format("warning: the other machines' logs cannot be written in this machine's --log_dir ({}: {}); "
                  "they stay in each machine's own --log_dir, and the job goes on",
                  path, std::strerror(error)));
}

// Opened for each chunk and closed after it: a job of many machines never holds a descriptor per
// rank file here (a chunk is many lines; opening costs little beside writing it).
void LogCollector::write(int machine, const std::string& host, const job::LogChunk& c) {
  if (run_dir_.empty()) return;
  const auto key = std::make_tuple(machine, c.round, c.local_rank, c.stream);
  if (broken_.count(key)) return;
  const std::string dir =
      fmt::format("{}/machine_{}_{}/attempt_{}/{}", run_dir_, machine, safeHostName(host), c.round, c.local_rank);
  const std::string path = dir + (c.stream == 1 ? "/stdout.log" : "/stderr.log");
  if (made_.insert(dir).second) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      failed(dir, ec.value());
      broken_.insert(key);
      return;
    }
  }
  std::string text;
  if (c.dropped > 0) {
    text = fmt::format(
        "\n[accel: {} bytes of this stream were not sent here: machine 0 fell behind; machine {}'s "
        "own --log_dir has them]\n",
        c.dropped, machine);
  }
  text += c.data;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int error = fd < 0 ? errno : 0;
  for (size_t done = 0; fd >= 0 && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (fd >= 0) ::close(fd);
  if (error) {
    failed(path, error);
    broken_.insert(key);
  }
}

}  // namespace accel::launch::supervise
