// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/event_log.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace accel::launch::watch {

namespace {

// The longest line taken from another machine: an event is a few hundred bytes.
constexpr size_t kMaxForwardedLine = 16 * 1024;

}  // namespace

EventLog::~EventLog() {
  for (const auto& t : targets_) {
    if (t.owned) ::close(t.fd);
  }
}

void EventLog::open(const plan::LaunchPlan& plan, const std::string& run_dir) {
  console_ = plan.watching.console_events;
  std::vector<std::string> files;
  if (!run_dir.empty()) files.push_back(run_dir + "/" + kEventsFile);
  if (!plan.watching.event_file.empty()) files.push_back(plan.watching.event_file);
  for (const auto& path : files) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      say_(fmt::format("warning: the event log {} cannot be opened: {}; the job goes on without it", path,
                       std::strerror(errno)),
           true);
      continue;
    }
    targets_.push_back({fd, true, path});
  }
  if (plan.watching.event_fd >= 0) {
    targets_.push_back({plan.watching.event_fd, false, fmt::format("fd:{}", plan.watching.event_fd)});
  }
}

void EventLog::record(const Event& e, const TorchrunContext& context) {
  write(eventLine(e));
  if (!console_) return;
  if (auto line = torchrunLine(e, context)) say_(*line, false);
}

void EventLog::recordLine(const std::string& line) {
  if (line.size() > kMaxForwardedLine || line.find('\n') != std::string::npos) return;
  const auto parsed = nlohmann::json::parse(line, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return;
  write(line);
}

void EventLog::write(const std::string& line) {
  const std::string text = line + "\n";
  for (auto it = targets_.begin(); it != targets_.end();) {
    // A pipe or FIFO whose reader stalls must not stop the launcher: a line it cannot take now
    // is dropped (a regular file always can).
    pollfd ready{it->fd, POLLOUT, 0};
    if (::poll(&ready, 1, 0) == 0) {
      if (!it->stalled) {
        say_(fmt::format("warning: the event log {} is not being read; events are dropped while it stalls", it->name),
             true);
      }
      it->stalled = true;
      ++it;
      continue;
    }
    it->stalled = false;
    ssize_t n;
    do {
      n = ::write(it->fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(text.size())) {
      ++it;
      continue;
    }
    say_(fmt::format("warning: the event log {} cannot be written ({}); no more events go there, the job goes on",
                     it->name, n < 0 ? std::strerror(errno) : "a short write: the disk is full"),
         true);
    if (it->owned) ::close(it->fd);
    it = targets_.erase(it);
  }
}

}  // namespace accel::launch::watch
