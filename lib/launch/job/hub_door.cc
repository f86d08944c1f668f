// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/hub_door.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel::launch::job {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kNoteEvery = std::chrono::seconds(1);
constexpr auto kGrace = std::chrono::seconds(1);  // a waiting connection's time to speak before it can be pushed out

bool outOfDescriptors(int error) { return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM; }

std::string who(const LineConnection& c) { return net::peerAddress(c.fd()); }

}  // namespace

HubDoor::HubDoor(int listen_fd, std::string token, Limits limits, Note note)
    : listen_fd_(listen_fd), token_(std::move(token)), limits_(limits), note_(std::move(note)) {}

void HubDoor::addPollFds(std::vector<pollfd>& fds) const {
  if (Clock::now() >= paused_until_) fds.push_back({listen_fd_, POLLIN, 0});
  for (const auto& c : waiting_) fds.push_back(c->pollFd());
}

int HubDoor::timeoutMs() const {
  const auto now = Clock::now();
  std::optional<Clock::time_point> next;
  if (paused_until_ > now) next = paused_until_;
  if (!waiting_.empty()) {
    const auto up = waiting_.front()->since() + limits_.auth_timeout;  // the oldest is due first
    next = next ? std::min(*next, up) : up;
  }
  if (unsaid_ > 0) next = next ? std::min(*next, last_note_ + kNoteEvery) : last_note_ + kNoteEvery;
  return next ? net::remainingMs(*next) : -1;
}

// The waiting connections are read before new ones are accepted, and a new one is read as soon
// as it is accepted: a launcher sends its join with its connect, so it is let in before any
// crowd of strangers could push it out.
void HubDoor::service(const std::vector<pollfd>& fds, std::vector<Entrant>& entrants,
                      std::vector<OtherVersion>& others) {
  for (size_t i = 0; i < waiting_.size();) {
    auto& c = waiting_[i];
    short revents = 0;
    for (const auto& p : fds) {
      if (p.fd == c->fd()) revents = p.revents;
    }
    if (settle(c, revents, entrants, others)) {
      waiting_.erase(waiting_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  for (const auto& p : fds) {
    if (p.fd == listen_fd_ && (p.revents & POLLIN)) accept(entrants, others);
  }
  if (unsaid_ > 0 && Clock::now() - last_note_ >= kNoteEvery) note("");
}

// Reads what `c` sent: true when it is done with (let in, passed on, or closed).
bool HubDoor::settle(std::unique_ptr<LineConnection>& c, short revents, std::vector<Entrant>& entrants,
                     std::vector<OtherVersion>& others) {
  const std::vector<std::string> lines = revents ? c->service(revents) : std::vector<std::string>{};
  if (!lines.empty()) return admit(c, lines.front(), entrants, others);
  if (c->closed()) {
    note(fmt::format("a connection closed before it said anything ({})", c->error()));
    return true;
  }
  if (Clock::now() - c->since() >= limits_.auth_timeout) {
    refuse(*c, fmt::format("sent no join within {:g} s", defaults::seconds(limits_.auth_timeout)));
    return true;
  }
  return false;
}

// At most max_waiting connections a call, so a flood cannot hold the launcher here.
void HubDoor::accept(std::vector<Entrant>& entrants, std::vector<OtherVersion>& others) {
  for (size_t taken = 0; taken < limits_.max_waiting;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
    if (fd < 0) return outOfDescriptors(errno) ? exhausted(errno) : void();  // else EAGAIN: none left
    ++taken;
    auto c = std::make_unique<LineConnection>(fd);
    if (settle(c, POLLIN, entrants, others)) continue;  // its join was there already
    if (!makeRoom()) {  // closed without a word: a launcher then connects again (job_member.h)
      note(
          fmt::format("closed a connection from {} that connected while the door was full of connections that have "
                      "not joined yet",
                      who(*c)));
      continue;
    }
    waiting_.push_back(std::move(c));
  }
}

// A place among the waiting: the oldest goes once it has had kGrace to speak; a newcomer waits
// in line otherwise (a launcher's join comes with its connect).
bool HubDoor::makeRoom() {
  if (waiting_.size() < limits_.max_waiting) return true;
  if (Clock::now() - waiting_.front()->since() < kGrace) return false;
  closeOldest("to make room: too many connections waiting to join");
  return true;
}

// Out of descriptors: the oldest waiting connection makes room, or accepting pauses.
void HubDoor::exhausted(int error) {
  if (!waiting_.empty()) return closeOldest(fmt::format("to make room: {}", toLower(std::strerror(error))));
  paused_until_ = Clock::now() + limits_.backoff;
  note(fmt::format("cannot accept on the job port ({}): pausing {} ms", toLower(std::strerror(error)),
                   limits_.backoff.count()));
}

void HubDoor::closeOldest(const std::string& why) {
  note(fmt::format("closed a connection from {} that had not joined, {}", who(*waiting_.front()), why));
  waiting_.pop_front();
}

bool HubDoor::admit(std::unique_ptr<LineConnection>& c, const std::string& line, std::vector<Entrant>& entrants,
                    std::vector<OtherVersion>& others) {
  std::string error;
  auto hello = job::readHello(line, error);
  if (!hello) return refuse(*c, error), true;
  if (!job::sameToken(hello->token, token_)) return refuse(*c, "offered another job's token"), true;
  if (hello->version != job::kProtocolVersion) {
    others.push_back({std::move(c), *hello});
    return true;
  }
  auto message = job::decode(line, error);
  if (!message || !std::holds_alternative<job::Join>(*message))
    return refuse(*c, "sent a join that is not valid: " + error), true;
  entrants.push_back({std::move(c), std::get<job::Join>(*message)});
  return true;
}

// A stranger hears why (a real launcher of another job says so itself), then the door closes.
void HubDoor::refuse(LineConnection& c, const std::string& why) {
  note(fmt::format("closed a connection from {} that {}", who(c), why));
  c.send(
      job::encode(job::Refuse{job::kProtocolVersion, "machine 0's launcher closed this connection: it " + why,
                              "only `accel launch` of the same job (same --rdzv_token, same accel version) may join"}));
  c.close();
}

void HubDoor::note(const std::string& line) {
  const auto now = Clock::now();
  if (!line.empty() && now - last_note_ < kNoteEvery) return void(++unsaid_);
  std::string text = line;
  if (unsaid_ > 0) {
    text += fmt::format("{}{} more such note(s) held back", text.empty() ? "" : " (", unsaid_);
    if (!line.empty()) text += ")";
  }
  if (!text.empty()) note_("job port: " + text);
  unsaid_ = 0;
  last_note_ = now;
}

}  // namespace accel::launch::job
