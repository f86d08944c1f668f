// SPDX-License-Identifier: Apache-2.0
// The client end of a TCPStore connection: connect with retry, handshake, request/reply round
// trips, the rendezvous wait. Internal to TCPStore, which owns one per store object.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/store/tcp_store.h"
#include "runtime/store/tcp_store_protocol.h"

namespace accel {

// One connection, one request in flight: the mutex is held for a whole round trip, so a thread
// blocked in get()/wait() holds up the other threads using the same client (as in c10d).
// Thread-safe.
class TCPStoreClient {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects to host:port, retrying with back-off until options.timeout, then shakes hands.
  // Throws StoreTimeout when the store cannot be reached, Error when it refuses this client.
  TCPStoreClient(const std::string& host, int port, const TCPStoreOptions& options);
  ~TCPStoreClient();
  TCPStoreClient(const TCPStoreClient&) = delete;
  TCPStoreClient& operator=(const TCPStoreClient&) = delete;

  // now + timeout, capped at a year so that a timeout of "forever" cannot overflow the clock.
  static Clock::time_point deadlineAfter(std::chrono::milliseconds timeout);
  // A request frame under construction, the command byte written.
  static store_protocol::Writer newRequest(store_protocol::Command command);

  // Sends `request` and returns parse(reader, timed_out) on the reply. `server_wait` is how
  // long the server may hold the request before it answers. Blocking; throws Error when the
  // connection fails (it then stays failed) or the reply is malformed.
  template <typename Parse>
  auto call(store_protocol::Writer& request, std::chrono::milliseconds server_wait, Parse parse) {
    Bytes reply = roundTrip(request, server_wait);
    try {
      store_protocol::Reader r(reply.data(), reply.size());
      auto status = store_protocol::Status(r.u8());
      if (status != store_protocol::Status::kOk && status != store_protocol::Status::kTimeout) {
        throw store_protocol::ProtocolError("unexpected status");
      }
      return parse(r, status == store_protocol::Status::kTimeout);
    } catch (const store_protocol::ProtocolError& e) {
      throwMalformed(e);
    }
  }

  // Blocks until ranks 0..world_size-1 have all shaken hands with the server, or `deadline`;
  // then throws StoreTimeout "rendezvous: 3/4 ranks joined <where> after <timeout>; missing: …".
  void waitForRanks(int world_size, Clock::time_point deadline, std::chrono::milliseconds timeout);

  // The error for a get/wait whose keys did not appear in time.
  StoreTimeout keyTimeout(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) const;

 private:
  Bytes roundTrip(store_protocol::Writer& request, std::chrono::milliseconds server_wait);
  [[noreturn]] void throwMalformed(const std::exception& e) const;
  void handshake(const TCPStoreOptions& options, Clock::time_point deadline);
  void sendAll(const uint8_t* data, size_t size, Clock::time_point deadline);
  void recvAll(uint8_t* data, size_t size, Clock::time_point deadline);
  void waitReady(short events, Clock::time_point deadline);
  Error systemError() const;  // from errno

  std::string where_;
  std::chrono::milliseconds grace_;
  int fd_ = -1;
  std::mutex mutex_;
  bool broken_ = false;  // a round trip failed half-way: the byte stream cannot be trusted
};

}  // namespace accel
