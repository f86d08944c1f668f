// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/rank_questions.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxConnections = 64;
constexpr size_t kMaxQuestion = 64;
constexpr auto kPatience = std::chrono::seconds(3);
constexpr auto kPause = std::chrono::milliseconds(200);

}  // namespace

RankQuestions::RankQuestions(const std::string& tag) : name_(fmt::format("@accel-{}-{}", tag, ::getpid())) {
  std::string error;
  listen_fd_ = net::listenUnix(name_, error);
  if (listen_fd_ < 0) {
    throw Error(fmt::format("cannot listen on {} for the workers' questions: {}", name_, error),
                "a Unix socket of the abstract namespace: is this a sandbox without one?");
  }
}

RankQuestions::~RankQuestions() {
  askers_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void RankQuestions::addPollFds(std::vector<pollfd>& fds) const {
  if (Clock::now() >= paused_until_) fds.push_back({listen_fd_, POLLIN, 0});
  for (const auto& a : askers_) fds.push_back(a.conn->pollFd());
}

int RankQuestions::timeoutMs() const {
  const auto now = Clock::now();
  if (paused_until_ > now) return net::remainingMs(paused_until_);
  if (askers_.empty()) return -1;
  return net::remainingMs(askers_.front().conn->since() + kPatience);
}

// At most kMaxConnections a call; out of descriptors, accepting pauses instead of spinning.
void RankQuestions::accept() {
  for (size_t taken = 0; taken < kMaxConnections; ++taken) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        paused_until_ = Clock::now() + kPause;
      return;
    }
    if (askers_.size() >= kMaxConnections) askers_.pop_front();
    askers_.push_back({std::make_unique<LineConnection>(fd), 0});
  }
}

std::vector<RankQuestions::Question> RankQuestions::service(const std::vector<pollfd>& fds) {
  std::vector<Question> questions;
  for (const auto& p : fds) {
    if (p.fd == listen_fd_ && (p.revents & POLLIN)) accept();
  }
  for (auto& a : askers_) {
    for (const auto& p : fds) {
      if (p.fd != a.conn->fd() || !p.revents) continue;
      for (const auto& line : a.conn->service(p.revents)) {
        if (a.id != 0) continue;  // one question a connection
        const auto rank =
            startsWith(line, "rank ") && line.size() <= kMaxQuestion ? parseInt(line.substr(5)) : std::nullopt;
        if (!rank || *rank < 0 || *rank > (1 << 30)) {
          a.conn->send("not a question: ask \"rank R\"");
          a.conn->close();
          break;
        }
        a.id = next_id_++;
        questions.push_back({a.id, static_cast<int>(*rank)});
      }
    }
  }
  const auto now = Clock::now();
  for (auto& a : askers_) {
    if (a.conn->open() && now - a.conn->since() >= kPatience) {
      a.conn->send("no answer within " + std::to_string(kPatience.count()) + " s");
      a.conn->close();
    }
  }
  std::erase_if(askers_, [](const Asker& a) { return !a.conn->open(); });
  return questions;
}

void RankQuestions::answer(long long id, const std::string& text) {
  for (auto& a : askers_) {
    if (a.id != id) continue;
    a.conn->send(text.substr(0, 4096));
    a.conn->close();
  }
}

}  // namespace accel
