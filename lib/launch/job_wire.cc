// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job_wire.h"

#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
// A peer that sends a line longer than this is not an accel launcher.
constexpr size_t kMaxLine = 1 << 20;
}  // namespace

LineConnection::LineConnection(int fd) : fd_(fd), last_heard_(Clock::now()), last_sent_(Clock::now()) {}

LineConnection::~LineConnection() { close(); }

void LineConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  closed_ = true;
}

void LineConnection::send(const json& message) {
  if (!open()) return;
  out_ += message.dump() + "\n";
  last_sent_ = Clock::now();
  flush();
}

void LineConnection::flush() {
  while (open() && !out_.empty()) {
    ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        error_ = toLower(std::strerror(errno));
        close();
      }
      return;
    }
  }
}

std::vector<json> LineConnection::service(short revents) {
  std::vector<json> messages;
  if (!open()) return messages;
  if (revents & POLLOUT) flush();
  if (!(revents & (POLLIN | POLLHUP | POLLERR))) return messages;
  char buffer[16384];
  ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    error_ = n == 0 ? "connection closed" : toLower(std::strerror(errno));
    close();
    return messages;
  }
  if (n < 0) return messages;
  in_.append(buffer, static_cast<size_t>(n));
  last_heard_ = Clock::now();
  for (size_t end; (end = in_.find('\n')) != std::string::npos;) {
    json message = json::parse(in_.substr(0, end), nullptr, false);
    in_.erase(0, end + 1);
    if (!message.is_object() || !message.contains("t")) {
      error_ = "a line that is not an accel job message";
      close();
      return messages;
    }
    messages.push_back(std::move(message));
  }
  if (in_.size() > kMaxLine) {
    error_ = "a line longer than 1 MiB";
    close();
  }
  return messages;
}

int readInterrupt(int signal_fd, short revents) {
  if (!(revents & POLLIN)) return 0;
  signalfd_siginfo info;
  int signal = 0;
  while (::read(signal_fd, &info, sizeof info) == sizeof info) {
    if (info.ssi_signo != SIGCHLD && !signal) signal = static_cast<int>(info.ssi_signo);
  }
  return signal;
}

json failureToJson(const WorkerFailure& f) {
  return {{"machine", f.machine}, {"host", f.host}, {"rank", f.rank}, {"who", f.who}, {"pid", f.pid},
          {"code", f.exit_code}, {"exit", f.exit_text}, {"seconds", f.seconds},
          {"killed_from_outside", f.killed_from_outside}, {"tail", f.stderr_tail},
          {"raised", f.raised}, {"traceback", f.traceback}};
}

WorkerFailure failureFromJson(const json& j) {
  WorkerFailure f;
  f.machine = j.value("machine", 0);
  f.host = j.value("host", "");
  f.rank = j.value("rank", 0);
  f.who = j.value("who", "");
  f.pid = j.value("pid", 0);
  f.exit_code = j.value("code", 1);
  f.exit_text = j.value("exit", "");
  f.seconds = j.value("seconds", 0.0);
  f.killed_from_outside = j.value("killed_from_outside", false);
  f.stderr_tail = j.value("tail", std::vector<std::string>{});
  f.raised = j.value("raised", std::string());
  f.traceback = j.value("traceback", std::vector<std::string>{});
  return f;
}

std::string describeWorker(const WorkerFailure& f) {
  return fmt::format("{} on machine {} ({})", f.who, f.machine, f.host);
}

void FailureLedger::add(const WorkerFailure& f, bool replaces, double at_seconds) {
  if (replaces) {
    for (auto& r : reports_) {
      if (r.failure.machine == f.machine) return void(r.failure = f);
    }
  }
  reports_.push_back({f, at_seconds});
}

const WorkerFailure& FailureLedger::first() const {
  const Report* first = &reports_.front();
  if (startsWith(first->failure.exit_text, "exited")) {
    for (const auto& r : reports_) {
      if (r.failure.killed_from_outside && r.at - first->at < kKilledFirstWindow) return r.failure;
    }
  }
  return first->failure;
}

JobEvent decideRound(int round, int max_restarts, const RoundOutcome& o) {
  JobEvent e;
  e.kind = JobEvent::Kind::End;
  if (o.failures && !o.failures->empty()) e.failure = o.failures->first();
  if (o.signal) {
    e.signal = o.signal;
    e.exit_code = 128 + o.signal;
  } else if (!o.lost.empty()) {
    e.exit_code = 1;
    e.message = o.lost;
    e.hint = o.lost_hint;
  } else if (e.failure && round < max_restarts) {
    e.kind = JobEvent::Kind::Restart;
    e.round = round + 1;
  } else if (e.failure) {
    e.exit_code = e.failure->exit_code;
  } else if (!o.all_succeeded) {
    e.exit_code = 1;  // workers stopped for a reason that was not reported: never a silent 0
    e.message = "the round ended with stopped workers and no failure reported";
  }
  return e;
}

}  // namespace accel
