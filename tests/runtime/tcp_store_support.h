// SPDX-License-Identifier: Apache-2.0
// What the TCPStore tests share (tcp_store_test.cc, tcp_store_failure_test.cc): options, threads
// as ranks, a raw socket that speaks (or breaks) the store's protocol, and waiting for a
// condition. 127.0.0.1 and OS-chosen ports only.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lib/common/strings.h"
#include "runtime/store/tcp_store.h"
#include "runtime/store/tcp_store_protocol.h"
#include "runtime/store/tcp_store_server.h"

namespace accel::test {

using namespace std::chrono_literals;
namespace proto = accel::store_protocol;
using Clock = std::chrono::steady_clock;

inline const std::string kToken = "0123456789abcdef0123456789abcdef";

inline TCPStoreOptions options(int rank, int world_size = -1, std::chrono::milliseconds timeout = 10s,
                               std::string token = kToken) {
  TCPStoreOptions o;
  o.rank = rank;
  o.world_size = world_size;
  o.token = std::move(token);
  o.timeout = timeout;
  return o;
}

// A socket bound, not listening, to a loopback port the OS chose: {descriptor (-1 on failure),
// port}. Connections to it are refused, and no one else can take the port while it is open.
inline std::pair<int, int> boundLoopbackSocket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return {-1, 0};
  }
  return {fd, ntohs(addr.sin_port)};
}

inline std::string where(int port) { return "127.0.0.1:" + std::to_string(port); }

// Runs body(rank) on n threads; returns the first exception's message of each failing rank.
template <typename Body> std::vector<std::string> onThreads(int n, Body body) {
  std::mutex mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        body(rank);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back("rank " + std::to_string(rank) + ": " + e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

// A raw client socket, for speaking (or breaking) the protocol by hand.
struct RawSocket {
  int fd = -1;
  explicit RawSocket(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~RawSocket() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void send(const std::vector<uint8_t>& bytes) const {
    auto sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    REQUIRE(sent == static_cast<ssize_t>(bytes.size()));
  }
  // Reads until `n` bytes or EOF (or 5 s pass); returns what came.
  std::vector<uint8_t> receive(size_t n) const {
    std::vector<uint8_t> out;
    const auto deadline = Clock::now() + 5s;
    while (out.size() < n && Clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      uint8_t buf[4096];
      ssize_t got = ::recv(fd, buf, std::min(sizeof buf, n - out.size()), 0);
      if (got <= 0) break;
      out.insert(out.end(), buf, buf + got);
    }
    return out;
  }
};

inline std::vector<uint8_t> handshake(const std::string& token, uint32_t version = proto::kVersion) {
  proto::Writer w;
  w.u32(proto::kMagic);
  w.u32(version);
  w.i32(-1);
  w.field(token);
  return w.bytes();
}

// The handshake reply: status, then the reason.
inline std::pair<uint8_t, std::string> readHandshakeReply(const RawSocket& s) {
  auto head = s.receive(5);
  REQUIRE(head.size() == 5);
  proto::Reader r(head.data(), head.size());
  uint8_t status = r.u8();
  auto reason = s.receive(r.u32());
  return {status, std::string(reason.begin(), reason.end())};
}

// Polls `condition` for up to 5 s.
template <typename Condition> bool eventually(Condition condition) {
  const auto deadline = Clock::now() + 5s;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace accel::test
