// SPDX-License-Identifier: Apache-2.0
// TCPStore: rank 0 hosts a store server (a background thread) at MASTER_ADDR:MASTER_PORT; every
// rank, rank 0 included, talks to it as a client. Each connection starts with a handshake that
// carries a magic number, the protocol version, the run token (ACCEL_STORE_TOKEN) and the
// client's rank: a wrong token or version is refused with a clear error on both sides, so two
// jobs that collide on a port never talk to each other. Thread-safe (one connection, a mutex).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/store/store.h"

namespace accel {

class TCPStoreServer;

struct TCPStoreOptions {
  bool is_server = false;  // host the server in this process (rank 0)
  int rank = 0;            // sent in the handshake; -1 for an anonymous client (tools, tests)
  int world_size = -1;     // when > 0: the constructor waits until this many ranks have joined
  std::string token;       // must match the server's
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
  bool wait_for_workers = true;  // with world_size > 0: block in the constructor until all joined
  // How long past the server's own deadline a reply may take before the server counts as hung;
  // 0: the timeout, at least 5 s.
  std::chrono::milliseconds reply_grace{0};
  // false: one connection attempt; a refused one throws Error at once (the server is gone),
  // where a rendezvous retries until the timeout for a server that starts late.
  bool retry_connect = true;
};

class TCPStore : public Store {
 public:
  // Connects (retrying with back-off until the timeout); on the server, first starts listening.
  // Throws StoreTimeout like "rendezvous: 3/4 ranks joined 127.0.0.1:29500 after 30 s;
  // missing: rank 2", and Error for a refused handshake or a port that cannot be bound.
  TCPStore(std::string host, int port, TCPStoreOptions options);
  ~TCPStore() override;  // a server waits (up to the timeout) until every client has left

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  using Store::wait;
  bool deleteKey(const std::string& key) override;
  int64_t numKeys() override;
  Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  // An anonymous client of its own, every wait (connecting included) at most `limit`. Once the
  // server failed to answer one, later ones within kSilenceRemembered fail at once: several
  // questions after one failure do not each wait for a server already seen silent.
  std::unique_ptr<Store> quickHandle(std::chrono::milliseconds limit) override;
  static constexpr std::chrono::seconds kSilenceRemembered{10};

  const std::string& host() const { return host_; }
  int port() const { return port_; }  // the bound port (useful when 0 was asked for)

 private:
  class Client;
  std::string host_;
  int port_;
  TCPStoreOptions options_;
  std::unique_ptr<TCPStoreServer> server_;
  std::unique_ptr<Client> client_;
  std::mutex silence_mutex_;
  std::optional<std::chrono::steady_clock::time_point> silent_at_;  // a quick handle found no answer
};

}  // namespace accel
