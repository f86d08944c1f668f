// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/tcp_store_client.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel {

namespace proto = store_protocol;
using proto::Command;
using proto::Status;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// Connect retries back off from 10 ms to 1 s: quick when rank 0 is a moment late, quiet when it
// is late by minutes.
constexpr milliseconds kFirstRetry{10};
constexpr milliseconds kMaxRetry{1000};
// How long past the server's own deadline a client waits for a reply before it declares the
// server hung (a dead server is noticed at once: the socket closes).
constexpr milliseconds kMinReplyGrace{5000};
constexpr milliseconds kMaxReplyGrace = std::chrono::hours(1);

std::string seconds(milliseconds ms) { return fmt::format("{} s", static_cast<double>(ms.count()) / 1000); }

}  // namespace

TCPStoreClient::TCPStoreClient(const std::string& host, int port, const TCPStoreOptions& options)
    : where_(proto::endpoint(host, port)),
      grace_(options.reply_grace.count() > 0 ? std::min(options.reply_grace, kMaxReplyGrace)
                                             : std::clamp(options.timeout, kMinReplyGrace, kMaxReplyGrace)) {
  const auto deadline = deadlineAfter(options.timeout);
  std::string error = "timed out";
  for (milliseconds backoff = kFirstRetry;; backoff = std::min(backoff * 2, kMaxRetry)) {
    fd_ = net::connectTcp(host, port, deadline, error);
    if (fd_ >= 0) break;
    const auto now = Clock::now();
    if (!options.retry_connect && now < deadline) {
      throw Error(fmt::format("store at {}: {} (did rank 0 exit?)", where_, error));
    }
    if (now >= deadline) {
      throw StoreTimeout(fmt::format("rendezvous: cannot reach the store at {} after {} ({}); is "
                                     "rank 0 running?",
                                     where_, seconds(options.timeout), error),
                         "start rank 0 first, or check MASTER_ADDR/MASTER_PORT and that this host "
                         "can reach that port");
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
  }
  try {
    handshake(options, deadlineAfter(grace_));
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

TCPStoreClient::~TCPStoreClient() { ::close(fd_); }

TCPStoreClient::Clock::time_point TCPStoreClient::deadlineAfter(milliseconds timeout) {
  return Clock::now() + std::clamp(timeout, milliseconds(0), kLongestWait);
}

proto::Writer TCPStoreClient::newRequest(Command command) {
  proto::Writer w;
  w.beginFrame();
  w.u8(uint8_t(command));
  return w;
}

StoreTimeout TCPStoreClient::keyTimeout(const std::vector<std::string>& keys, milliseconds timeout) const {
  return StoreTimeout(fmt::format("store at {}: timed out after {} ms waiting for key(s) {}", where_, timeout.count(),
                                  join(keys, ", ")));
}

void TCPStoreClient::throwMalformed(const std::exception& e) const {
  throw Error(fmt::format("store at {} sent a malformed reply ({})", where_, e.what()));
}

void TCPStoreClient::handshake(const TCPStoreOptions& options, Clock::time_point deadline) {
  if (options.token.size() > proto::kMaxTokenBytes) {
    throw Error(fmt::format("store: the run token is over the {}-byte limit", proto::kMaxTokenBytes));
  }
  proto::Writer w;
  w.u32(proto::kMagic);
  w.u32(proto::kVersion);
  w.i32(options.rank);
  w.field(options.token);
  sendAll(w.bytes().data(), w.bytes().size(), deadline);
  uint8_t head[5];
  recvAll(head, sizeof head, deadline);
  proto::Reader r(head, sizeof head);
  auto status = Status(r.u8());
  uint32_t len = r.u32();
  if (len > proto::kMaxReasonBytes) {
    throw Error(
        fmt::format("store at {} answered the handshake with garbage; is another program "
                    "listening on that port?",
                    where_));
  }
  std::string reason(len, '\0');
  recvAll(reinterpret_cast<uint8_t*>(reason.data()), len, deadline);
  if (status == Status::kOk) return;
  throw Error(fmt::format("store at {} refused this client: {}", where_, reason),
              status == Status::kRefusedToken
                  ? "every rank of one job gets the same ACCEL_STORE_TOKEN from `accel launch`; "
                    "if another job owns the port, pick another --main_process_port"
                  : "");
}

Bytes TCPStoreClient::roundTrip(proto::Writer& request, milliseconds server_wait) {
  request.finishFrame();
  if (request.bytes().size() - 4 > proto::kMaxFrameBytes) {
    throw Error(fmt::format("store: a request of {} bytes is over the protocol limit", request.bytes().size()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (broken_) {
    throw Error(fmt::format("store at {}: the connection was lost by an earlier call", where_));
  }
  const auto deadline = deadlineAfter(std::min(server_wait, kLongestWait) + grace_);
  try {
    sendAll(request.bytes().data(), request.bytes().size(), deadline);
    uint8_t head[4];
    recvAll(head, sizeof head, deadline);
    uint32_t len = proto::Reader(head, sizeof head).u32();
    if (len == 0 || len > proto::kMaxFrameBytes) {
      throw Error(fmt::format("store at {} sent a frame of an impossible length", where_));
    }
    Bytes reply(len);
    recvAll(reply.data(), len, deadline);
    return reply;
  } catch (...) {
    // Half a request or reply may be in flight: the stream is unusable. Shutting it down also
    // tells the server to drop whatever it holds for this client.
    broken_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    throw;
  }
}

void TCPStoreClient::waitReady(short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd_, events, 0};
    int rc = ::poll(&p, 1, net::remainingMs(deadline));
    if (rc > 0) return;
    if (rc == 0) {
      throw StoreTimeout(
          fmt::format("store at {} stopped answering (is the process of rank 0 "
                      "stopped or overloaded?)",
                      where_));
    }
    if (errno != EINTR) throw systemError();
  }
}

Error TCPStoreClient::systemError() const {
  return Error(fmt::format("store at {}: {} (did rank 0 exit?)", where_, toLower(std::strerror(errno))));
}

void TCPStoreClient::sendAll(const uint8_t* data, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      waitReady(POLLOUT, deadline);
    } else if (n == 0 || errno != EINTR) {
      throw systemError();
    }
  }
}

void TCPStoreClient::recvAll(uint8_t* data, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    ssize_t n = ::recv(fd_, data, size, 0);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (n == 0) {
      throw Error(fmt::format("store at {} closed the connection (did rank 0 exit?)", where_));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      waitReady(POLLIN, deadline);
    } else if (errno != EINTR) {
      throw systemError();
    }
  }
}

void TCPStoreClient::waitForRanks(int world_size, Clock::time_point deadline, milliseconds timeout) {
  if (world_size > proto::kMaxWorldSize) {
    throw Error(fmt::format("store: world size {} is over the limit of {}", world_size, proto::kMaxWorldSize));
  }
  auto left = milliseconds(net::remainingMs(deadline));
  auto w = newRequest(Command::kWaitRanks);
  w.i32(world_size);
  w.i64(left.count());
  call(w, left, [&](proto::Reader& r, bool timed_out) {
    int32_t joined = r.i32();
    std::vector<std::string> listed;
    for (uint32_t n = r.u32(); n > 0; --n) listed.push_back(std::to_string(r.i32()));
    r.expectEnd();
    if (!timed_out) return;
    const auto missing = static_cast<size_t>(world_size - joined);
    std::string ranks = join(listed, ", ");
    if (missing > listed.size()) ranks += fmt::format(" and {} more", missing - listed.size());
    throw StoreTimeout(fmt::format("rendezvous: {}/{} ranks joined {} after {}; missing: {} {}", joined, world_size,
                                   where_, seconds(timeout), missing == 1 ? "rank" : "ranks", ranks),
                       "check that every rank was started, with the same world size and store address");
  });
}

}  // namespace accel
