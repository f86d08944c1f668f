// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/metrics_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/launch/watch/metrics_text.h"

namespace accel::launch::watch {

namespace {

// The request's head: up to its blank line ("\r\n\r\n", or "\n\n" from a lax client), or "".
std::string headOf(const std::string& in) {
  for (const char* end : {"\r\n\r\n", "\n\n"}) {
    if (const size_t at = in.find(end); at != std::string::npos) return in.substr(0, at);
  }
  return "";
}

std::string refusal(int status, const char* reason, const std::string& why, const std::string& extra = "") {
  return httpAnswer(status, reason, "text/plain; charset=utf-8", why + "\n", extra);
}

}  // namespace

std::string httpAnswer(int status, const char* reason, const std::string& content_type, const std::string& body,
                       const std::string& extra_headers) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}",
                     status, reason, content_type, body.size(), extra_headers, body);
}

MetricsServer::~MetricsServer() { close(); }

std::string MetricsServer::open(const std::string& address, int port) {
  std::string error;
  int error_number = 0;
  listen_fd_ = net::listenTcp(address, port, error, error_number);
  if (listen_fd_ < 0) {
    return fmt::format(
        "warning: /metrics cannot be served on {}:{}: {}; the job goes on without it (another "
        "--metrics_port, or --metrics_addr)",
        address, port, error);
  }
  port_ = net::boundPort(listen_fd_);
  return "";
}

void MetricsServer::close() {
  for (auto& c : connections_) ::close(c.fd);
  connections_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

void MetricsServer::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  if (listen_fd_ < 0) return;
  const auto now = Clock::now();
  if (now >= paused_until_) {
    fds.push_back({listen_fd_, POLLIN, 0});
  } else {
    const int ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(paused_until_ - now).count());
    timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
  }
  for (const auto& c : connections_) {
    fds.push_back({c.fd, static_cast<short>(c.answered ? POLLOUT : POLLIN), 0});
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(c.since + idle_ - now).count();
    const int ms = static_cast<int>(std::max<long long>(0, left));
    timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
  }
}

void MetricsServer::service(const std::vector<pollfd>& fds, const std::function<std::string()>& render) {
  if (listen_fd_ < 0) return;
  for (const auto& p : fds) {
    if (p.fd == listen_fd_ && (p.revents & POLLIN)) accept();
  }
  for (auto& c : connections_) {
    const auto it = std::find_if(fds.begin(), fds.end(), [&](const pollfd& p) { return p.fd == c.fd; });
    if (it == fds.end() || !it->revents) continue;
    if (c.answered) {
      write(c);
    } else {
      read(c, render);
    }
  }
  const auto now = Clock::now();
  std::erase_if(connections_, [&](Connection& c) {
    const bool done = c.fd < 0 || now - c.since >= idle_;
    if (done && c.fd >= 0) ::close(c.fd);
    return done;
  });
}

void MetricsServer::accept() {
  for (int taken = 0; taken < kMaxAcceptsPerTurn; ++taken) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      paused_until_ = Clock::now() + kAcceptPause;  // the backlog waits; the loop does not spin on it
      return;
    }
    if (fd < 0) return;  // EAGAIN: none left
    if (connections_.size() >= kMaxConnections) {
      const std::string busy = refusal(503, "Service Unavailable", "too many connections to /metrics at once");
      (void)::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      continue;
    }
    connections_.push_back({fd, {}, {}, false, Clock::now()});
  }
}

void MetricsServer::read(Connection& c, const std::function<std::string()>& render) {
  char buffer[4096];
  bool ended = false;  // the client closed its side: a whole request before that is still answered
  for (;;) {
    const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      ended = true;
      break;
    }
    if (n < 0) break;
    c.in.append(buffer, static_cast<size_t>(n));
    if (c.in.size() > kMaxRequest) break;
  }
  std::string head = headOf(c.in);
  if (head.empty() && ended) {
    ::close(c.fd);
    c.fd = -1;
    return;
  }
  if (head.empty() && c.in.size() <= kMaxRequest) return;  // more to come, within the idle timeout
  if (!head.empty()) {
    c.out = answer(head, render);
  } else if (c.in.find('\n') == std::string::npos) {  // its first line alone is too long
    c.out = refusal(414, "URI Too Long", "the path is too long; this is /metrics");
  } else {
    c.out = refusal(431, "Request Header Fields Too Large", fmt::format("a request is at most {} bytes", kMaxRequest));
  }
  c.in.clear();
  c.answered = true;
  write(c);
}

std::string MetricsServer::answer(const std::string& head, const std::function<std::string()>& render) {
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const size_t space1 = line.find(' ');
  const size_t space2 = space1 == std::string::npos ? std::string::npos : line.find(' ', space1 + 1);
  if (space2 == std::string::npos || line.compare(space2 + 1, 5, "HTTP/") != 0) {
    return refusal(400, "Bad Request", "not an HTTP request");
  }
  const std::string method = line.substr(0, space1);
  const std::string target = line.substr(space1 + 1, space2 - space1 - 1);
  if (target.size() > kMaxTarget) return refusal(414, "URI Too Long", "the path is too long; this is /metrics");
  if (method != "GET") return refusal(405, "Method Not Allowed", "only GET /metrics is served", "Allow: GET\r\n");
  if (target.substr(0, target.find('?')) != "/metrics") {
    return refusal(404, "Not Found", "this launcher serves /metrics only");
  }
  return httpAnswer(200, "OK", kMetricsContentType, render());
}

void MetricsServer::write(Connection& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;  // the rest when it can take it
    if (n <= 0) break;
    c.out.erase(0, static_cast<size_t>(n));
  }
  ::shutdown(c.fd, SHUT_WR);
  // What the client sent beyond its request, read before closing: unread bytes at close() make
  // the kernel reset the connection, which can throw away the answer still on its way.
  char sink[4096];
  for (int i = 0; i < 16 && ::recv(c.fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(c.fd);
  c.fd = -1;
}

}  // namespace accel::launch::watch
