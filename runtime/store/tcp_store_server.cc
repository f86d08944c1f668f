// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/tcp_store_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "runtime/store/tcp_store_protocol.h"

namespace accel {

namespace proto = store_protocol;
using proto::Command;
using proto::Status;

namespace {

constexpr size_t kReadChunk = 64 << 10;
// A client that does not read its replies stops being read from (back-pressure, not buffering).
constexpr size_t kMaxPendingOutput = 1 << 20;
// One busy client cannot starve the others within one poll() round.
constexpr size_t kMaxReadPerRound = 4 << 20;

int listenOn(const std::string& host, int port) {
  std::string error;
  int error_number = 0;
  int fd = net::listenTcp(host, port, error, error_number);
  if (fd >= 0) return fd;
  std::string hint = error_number == EADDRINUSE ? "another process holds this port; pick another "
                                                  "--main_process_port, or 0 for a free one"
                                                : "";
  throw Error(fmt::format("store: cannot listen on {}: {}", proto::endpoint(host.empty() ? "*" : host, port), error),
              hint);
}

uint32_t readU32(const std::vector<uint8_t>& in, size_t at) { return proto::Reader(in.data() + at, 4).u32(); }

}  // namespace

void TCPStoreServer::log(const std::string& line) { fmt::print(stderr, "accel-runtime: {}\n", line); }

TCPStoreServer::TCPStoreServer(const std::string& host, int port, std::string token) : token_(std::move(token)) {
  listen_fd_ = listenOn(host, port);
  port_ = net::boundPort(listen_fd_);
  if (::pipe2(wake_fds_, O_NONBLOCK | O_CLOEXEC) != 0) {
    ::close(listen_fd_);
    throw Error("store: cannot create a pipe: " + toLower(std::strerror(errno)));
  }
  try {
    thread_ = std::thread([this] { serve(); });
  } catch (...) {
    for (int fd : {listen_fd_, wake_fds_[0], wake_fds_[1]}) ::close(fd);
    throw;
  }
}

TCPStoreServer::~TCPStoreServer() {
  stop();
  for (int fd : {listen_fd_, wake_fds_[0], wake_fds_[1]}) ::close(fd);
}

void TCPStoreServer::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  [[maybe_unused]] auto n = ::write(wake_fds_[1], "x", 1);
  thread_.join();
  for (auto& c : conns_) c->dead = true;
  reap();
}

std::set<int> TCPStoreServer::joinedRanks() const {
  std::lock_guard<std::mutex> lock(census_mutex_);
  return joined_ranks_;
}

std::multiset<int> TCPStoreServer::connectedRanks() const {
  std::lock_guard<std::mutex> lock(census_mutex_);
  return connected_ranks_;
}

int TCPStoreServer::connectedClients() const {
  std::lock_guard<std::mutex> lock(census_mutex_);
  return connected_;
}

bool TCPStoreServer::waitUntilClientsLeft(std::chrono::milliseconds timeout) {
  timeout = std::min(timeout, kLongestWait);
  std::unique_lock<std::mutex> lock(census_mutex_);
  return census_changed_.wait_for(lock, timeout, [this] { return connected_ == 0; });
}

void TCPStoreServer::serve() {
  std::vector<pollfd> fds;
  while (!stopping_) {
    fds.clear();
    fds.push_back({wake_fds_[0], POLLIN, 0});
    // A negative fd is skipped by poll(): how accepting pauses after e.g. EMFILE.
    fds.push_back({Clock::now() >= accept_paused_until_ ? listen_fd_ : -1, POLLIN, 0});
    for (const auto& c : conns_) {
      short events = 0;
      bool backlogged = c->in.size() > kReadChunk && (c->parked || c->out.size() - c->out_pos > kMaxPendingOutput);
      if (!c->closing && !backlogged) events |= POLLIN;
      if (c->out_pos < c->out.size()) events |= POLLOUT;
      fds.push_back({c->fd, events, 0});
    }
    if (::poll(fds.data(), fds.size(), pollTimeoutMs()) < 0 && errno != EINTR) {
      log(std::string("store server: poll failed: ") + std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    try {
      serveRound(fds);
    } catch (const std::exception& e) {
      // Nothing a client sends gets here (processInput() drops that client); this is the
      // server itself out of memory or descriptors. Keep serving the others.
      log(std::string("store server: ") + e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void TCPStoreServer::serveRound(const std::vector<pollfd>& fds) {
  const size_t polled = fds.size() - 2;
  if (fds[1].revents & POLLIN) acceptAll();
  for (size_t i = 0; i < polled; ++i) handleEvents(*conns_[i], fds[i + 2].revents);
  expireParked();
  while (!runnable_.empty()) {
    Connection* c = runnable_.back();
    runnable_.pop_back();
    processInput(*c);
  }
  reap();
}

int TCPStoreServer::pollTimeoutMs() const {
  if (!runnable_.empty()) return 0;  // left over from a round cut short
  std::optional<Clock::time_point> next;
  if (accept_paused_until_ > Clock::now()) next = accept_paused_until_;
  for (const auto& c : conns_) {
    if (c->parked && (!next || c->parked->deadline < *next)) next = c->parked->deadline;
  }
  if (!next) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
}

void TCPStoreServer::acceptAll() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors: retry later rather than spin on a listener that stays readable.
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
      }
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    conns_.push_back(std::move(c));
  }
}

void TCPStoreServer::handleEvents(Connection& c, short revents) {
  if (c.dead) return;
  if (revents & (POLLERR | POLLNVAL)) {
    c.dead = true;
    return;
  }
  if (revents & POLLOUT) flush(c);
  if (revents & (POLLIN | POLLHUP)) readFrom(c);
  processInput(c);  // new input, or room again in the output for requests held back
}

void TCPStoreServer::readFrom(Connection& c) {
  uint8_t chunk[kReadChunk];
  size_t total = 0;
  while (!c.dead && total < kMaxReadPerRound) {
    ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      c.in.insert(c.in.end(), chunk, chunk + n);
      total += static_cast<size_t>(n);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
      c.dead = true;  // the client left, possibly mid-request: its parked request goes with it
    } else if (errno != EINTR) {
      break;
    }
  }
}

void TCPStoreServer::flush(Connection& c) {
  while (!c.dead && c.out_pos < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_pos += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      c.dead = true;
    }
  }
  c.out.clear();
  c.out_pos = 0;
  if (c.closing) c.dead = true;
}

void TCPStoreServer::processInput(Connection& c) {
  try {
    // Requests wait in `in` while replies pile up: a client that does not read cannot make the
    // server buffer without bound.
    while (!c.dead && !c.closing && !c.parked && c.out.size() - c.out_pos <= kMaxPendingOutput) {
      if (!c.handshaken) {
        if (!handshake(c)) break;
        continue;
      }
      size_t available = c.in.size() - c.in_pos;
      if (available < 4) break;
      uint32_t len = readU32(c.in, c.in_pos);
      if (len == 0 || len > proto::kMaxFrameBytes) throw proto::ProtocolError("bad frame length");
      if (available < 4 + size_t{len}) break;
      c.in_pos += 4 + size_t{len};
      handleRequest(c, c.in.data() + c.in_pos - len, len);
    }
  } catch (const std::exception&) {
    c.dead = true;  // malformed input, or no memory for it: this client only
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(c.in_pos));
  c.in_pos = 0;
}

void TCPStoreServer::reap() {
  std::vector<int> left;  // ranks of the handshaken clients that left (-1: anonymous)
  for (auto& c : conns_) {
    if (!c->dead) continue;
    if (c->closing) {
      // Unread input at close() turns the FIN into a RST, which can destroy the refusal reason
      // before the client reads it.
      ::shutdown(c->fd, SHUT_WR);
      char sink[512];
      while (::recv(c->fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
      }
    }
    ::close(c->fd);
    if (c->handshaken) left.push_back(c->rank);
    c.reset();
  }
  conns_.erase(std::remove(conns_.begin(), conns_.end(), nullptr), conns_.end());
  if (left.empty()) return;
  {
    std::lock_guard<std::mutex> lock(census_mutex_);
    connected_ -= static_cast<int>(left.size());
    for (int rank : left) {
      if (rank >= 0) connected_ranks_.erase(connected_ranks_.find(rank));
    }
  }
  census_changed_.notify_all();
  publishDepartures(left);
}

// Ranks whose last connection closed go into kDepartedRanksKey, so that when a collective
// fails, the survivors can name who left (a crash closes every socket of the process at once).
void TCPStoreServer::publishDepartures(const std::vector<int>& left) {
  bool changed = false;
  for (int rank : left) {
    if (rank < 0 || connectedRanks().count(rank) > 0) continue;
    Bytes& list = data_[kDepartedRanksKey];
    std::string text = toString(list), item = std::to_string(rank);
    if (("," + text + ",").find("," + item + ",") != std::string::npos) continue;
    list = toBytes(text.empty() ? item : text + "," + item);
    changed = true;
  }
  if (changed) wakeParked();
}

}  // namespace accel
