// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/rank_questions.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/launch/job/job_messages.h"

namespace accel::launch::supervise {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxConnections = 64;
constexpr size_t kMaxQuestion = 64;
constexpr auto kPatience = std::chrono::seconds(3);
// "stacks": the job's stacks take the tools' limit and machine 0's wait, and then the writing.
constexpr auto kStacksPatience = std::chrono::seconds(60);

// Whether the process at the other end of `fd` may read the stacks: this launcher's user or root.
bool mayReadStacks(int fd) {
  ucred who{};
  socklen_t size = sizeof who;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &who, &size) != 0) return false;
  return who.uid == 0 || who.uid == ::geteuid();
}

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
  int soonest = -1;
  for (const auto& a : askers_) {
    const int due = net::remainingMs(a.conn->since() + a.patience);
    soonest = soonest < 0 ? due : std::min(soonest, due);
  }
  return soonest;
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
    askers_.push_back({std::make_unique<job::LineConnection>(fd), 0, kPatience});
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
        if (auto q = read(a, line)) questions.push_back(*q);
        if (!a.conn->open()) break;
      }
      if (a.closing && !a.conn->wantsToWrite()) a.conn->close();
    }
  }
  expire();
  return questions;
}

std::optional<RankQuestions::Question> RankQuestions::read(Asker& a, const std::string& line) {
  if (line == "status") {
    if (!mayReadStacks(a.conn->fd())) {
      a.conn->send("not allowed: only the launcher's user (or root) may watch its ranks");
      a.conn->close();
      return std::nullopt;
    }
    a.id = next_id_++;
    a.stacks = true;  // answered in full
    a.patience = kStatusPatience;
    return Question{a.id, kStatus};
  }
  if (startsWith(line, "stacks ") && line.size() <= kMaxQuestion) {
    const auto seconds = parsePositiveSeconds(line.substr(7));
    if (!seconds || *seconds > job::kMaxStackSeconds) {
      a.conn->send("not a question: ask \"stacks SECONDS\" with SECONDS in (0, 600]");
      a.conn->close();
      return std::nullopt;
    }
    if (!mayReadStacks(a.conn->fd())) {
      a.conn->send("not allowed: only the launcher's user (or root) may read its ranks' stacks");
      a.conn->close();
      return std::nullopt;
    }
    a.id = next_id_++;
    a.stacks = true;
    a.patience = std::chrono::seconds(static_cast<long long>(*seconds)) + kStacksPatience;
    return Question{a.id, kStacks, *seconds};
  }
  const auto rank = startsWith(line, "rank ") && line.size() <= kMaxQuestion ? parseInt(line.substr(5)) : std::nullopt;
  if (!rank || *rank < 0 || *rank > (1 << 30)) {
    a.conn->send("not a question: ask \"rank R\", \"stacks SECONDS\" or \"status\"");
    a.conn->close();
    return std::nullopt;
  }
  a.id = next_id_++;
  return Question{a.id, static_cast<int>(*rank)};
}

void RankQuestions::expire() {
  const auto now = Clock::now();
  for (auto& a : askers_) {
    const auto wait = a.patience;
    if (a.conn->open() && now - a.conn->since() >= wait) {
      if (!a.closing) a.conn->send("no answer within " + std::to_string(wait.count()) + " s");
      a.conn->close();
    }
  }
  std::erase_if(askers_, [](const Asker& a) { return !a.conn->open(); });
}

void RankQuestions::answer(long long id, const std::string& text) {
  for (auto& a : askers_) {
    if (a.id != id || a.closing) continue;
    a.conn->send(a.stacks ? text : text.substr(0, 4096));
    a.closing = true;
    if (!a.conn->wantsToWrite()) a.conn->close();
  }
}

}  // namespace accel::launch::supervise
