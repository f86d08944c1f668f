// SPDX-License-Identifier: Apache-2.0
// The TCPStore server: one background thread serves every client through poll() over
// non-blocking sockets. Blocking get/wait requests are parked server-side until their keys
// appear or their deadline passes, so clients never poll. A misbehaving client only loses its
// own connection.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/store/store.h"
#include "runtime/store/tcp_store_protocol.h"

namespace accel {

class TCPStoreServer {
 public:
  // Binds host:port with SO_REUSEADDR ("" = every interface; port 0 = an ephemeral port, see
  // port()), listens, and starts the serving thread. Clients must present `token` in the
  // handshake. Throws Error when the address cannot be resolved or bound.
  TCPStoreServer(const std::string& host, int port, std::string token);
  ~TCPStoreServer();  // stop()
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }
  // Ranks (>= 0) that have completed the handshake at least once. Thread-safe.
  std::set<int> joinedRanks() const;
  // Ranks (>= 0) with a connection past the handshake right now. Thread-safe.
  std::multiset<int> connectedRanks() const;
  // Clients past the handshake and still connected (anonymous ones included). Thread-safe.
  int connectedClients() const;
  // Blocks until connectedClients() is 0 or `timeout` passes; true when no client is left.
  bool waitUntilClientsLeft(std::chrono::milliseconds timeout);
  // Stops and joins the serving thread and closes every connection (clients see the store
  // go away). Idempotent; thread-safe against the serving thread, not against itself.
  void stop();

 private:
  // tests/fuzz/tcp_store_server.cc runs serveRound() of a stopped server on its own thread,
  // over socketpairs: the fuzzer's thousands of inputs a second without a thread switch each.
  friend struct TCPStoreServerTesting;
  using Clock = std::chrono::steady_clock;
  // A get/wait/rendezvous request waiting for its keys or ranks.
  struct Parked {
    store_protocol::Command command;
    std::vector<std::string> keys;
    int32_t world_size = 0;
    Clock::time_point deadline;
  };
  struct Connection {
    int fd = -1;
    bool handshaken = false;
    int rank = -1;
    bool closing = false;  // refused: send what is queued, then close
    bool dead = false;     // closed at the end of this poll() round
    std::vector<uint8_t> in;
    size_t in_pos = 0;  // parsed up to here
    std::vector<uint8_t> out;
    size_t out_pos = 0;            // sent up to here
    std::optional<Parked> parked;  // at most one: replies go out in request order
  };

  static void log(const std::string& line);  // one line to stderr, "accel-runtime: " first
  void serve();
  void serveRound(const std::vector<pollfd>& fds);
  int pollTimeoutMs() const;
  void acceptAll();
  void handleEvents(Connection& c, short revents);
  void readFrom(Connection& c);
  void flush(Connection& c);
  void processInput(Connection& c);
  void reap();
  void publishDepartures(const std::vector<int>& left);
  // tcp_store_server_requests.cc: the handshake, the commands and the parked requests.
  bool handshake(Connection& c);
  void refuse(Connection& c, store_protocol::Status status, const std::string& reason, std::optional<int> rank);
  void handleRequest(Connection& c, const uint8_t* payload, size_t size);
  void send(Connection& c, store_protocol::Writer& w);
  void park(Connection& c, Parked parked);
  bool tryFinish(Connection& c, bool expired);
  void wakeParked();
  void expireParked();
  bool allRanksJoined(int world_size) const;

  std::string token_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // self-pipe: stop() interrupts poll()
  int port_ = 0;
  std::atomic<bool> stopping_{false};

  // Owned by the serving thread.
  std::vector<std::unique_ptr<Connection>> conns_;
  std::vector<Connection*> runnable_;  // answered parked requests: parse their buffered input
  std::unordered_map<std::string, Bytes> data_;
  Clock::time_point accept_paused_until_{};

  // Shared with other threads (the census of clients).
  mutable std::mutex census_mutex_;
  std::condition_variable census_changed_;
  std::set<int> joined_ranks_;
  std::multiset<int> connected_ranks_;  // a rank can reconnect before its old socket is reaped
  int connected_ = 0;

  std::thread thread_;  // last: starts after every member above is ready
};

}  // namespace accel
