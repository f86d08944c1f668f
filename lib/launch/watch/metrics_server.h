// SPDX-License-Identifier: Apache-2.0
// The launcher's /metrics for Prometheus: a small HTTP/1.1 server inside the supervisor's poll
// loop, so a scrape reads the launcher's state without a thread and without stopping anything.
// It answers a GET of /metrics (any query) with the text that `render` makes at that moment, and
// refuses the rest: another method 405, another path 404, a target past kMaxTarget 414, a
// request past kMaxRequest 431, a request that is no HTTP 400. Each answer closes its connection.
// Bounds, whatever strangers send: at most kMaxConnections at once (one more is answered 503 and
// closed at once), each closed after its idle timeout (kIdleTimeout) without a whole request or once its answer
// could not be written for as long; so never more than kMaxConnections + 2 descriptors.
// Single-threaded.
#pragma once

#include <poll.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace accel::launch::watch {

class MetricsServer {
 public:
  static constexpr size_t kMaxConnections = 8;
  static constexpr std::chrono::milliseconds kIdleTimeout{5000};
  static constexpr size_t kMaxRequest = 8 * 1024;
  static constexpr size_t kMaxTarget = 1024;
  static constexpr int kMaxAcceptsPerTurn = 64;
  // Out of descriptors: accepting waits this long, so a full backlog does not spin the loop.
  static constexpr std::chrono::milliseconds kAcceptPause{200};

  explicit MetricsServer(std::chrono::milliseconds idle_timeout = kIdleTimeout) : idle_(idle_timeout) {}
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Listens on address:port. Returns "" or a warning that says why it cannot (the job goes on
  // without /metrics): "/metrics cannot be served on 10.0.0.1:9400: address already in use".
  std::string open(const std::string& address, int port);
  bool listening() const { return listen_fd_ >= 0; }
  int port() const { return port_; }
  size_t connections() const { return connections_.size(); }
  // Its descriptors for poll, and the milliseconds until a connection's idle timeout.
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  // After poll (`fds` the whole array): accepts, reads, answers, closes what timed out.
  void service(const std::vector<pollfd>& fds, const std::function<std::string()>& render);
  void close();

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    std::string in{}, out{};
    bool answered = false;
    Clock::time_point since{};
  };
  void accept();
  void read(Connection& c, const std::function<std::string()>& render);
  void write(Connection& c);
  // The answer to a whole request (`head`: up to the blank line).
  static std::string answer(const std::string& head, const std::function<std::string()>& render);

  std::chrono::milliseconds idle_;
  Clock::time_point paused_until_{};
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<Connection> connections_;
};

// One HTTP/1.1 answer that closes its connection.
std::string httpAnswer(int status, const char* reason, const std::string& content_type, const std::string& body,
                       const std::string& extra_headers = "");

}  // namespace accel::launch::watch
