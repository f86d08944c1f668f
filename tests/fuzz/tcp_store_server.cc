// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the TCPStore server's request handling (runtime/store/tcp_store_server*.cc):
// arbitrary bytes from one connection while other clients keep being served.
// Input: the first byte chooses whether the connection first shakes hands validly (bit 0; bits
// 1-2 pick its rank: anonymous, 0, 1 or 7), so that the fuzzer reaches the requests without
// having to discover the handshake; the remaining bytes are sent as they are.
// Two servers, each rebuilt every 4096 inputs (or when keys pile up) so that what earlier inputs
// stored stays small:
//   - in memory, every input: a stopped server whose serveRound() (the serving thread's loop
//     body: readFrom, processInput, handleRequest, parking, flush, reap) this thread runs over
//     socketpairs, through TCPStoreServerTesting. The bytes are written, a round handles them,
//     then a well-behaved connection of the same server must get its set/get answered, and the
//     closed fuzz connection must be reaped. No thread switch, so the fuzzer runs fast;
//   - live, every 32nd input (every input when replayed): the real threaded server on
//     127.0.0.1, an OS-chosen port, a raw TCP socket sending the same bytes, and a real TCPStore
//     client whose set/get/numKeys round trips must still work. Three round trips order things:
//     by the third reply the server has handled all the raw socket sent before the first one.
// A server that stops answering, answers wrongly or dies (an exception out of its thread
// terminates the process) fails the input.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "runtime/store/tcp_store.h"
#include "runtime/store/tcp_store_protocol.h"
#include "runtime/store/tcp_store_server.h"
#include "tests/fuzz/fuzz_support.h"

namespace proto = accel::store_protocol;

namespace accel {

struct TCPStoreServerTesting {
  // A connection as acceptAll() would add one; returns the client's end of the socketpair.
  static int connect(TCPStoreServer& s) {
    int sv[2];
    FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0, "socketpair()");
    auto c = std::make_unique<TCPStoreServer::Connection>();
    c->fd = sv[0];
    s.conns_.push_back(std::move(c));
    return sv[1];
  }
  // One serving round in which poll() found every connection readable and writable.
  static void round(TCPStoreServer& s) {
    std::vector<pollfd> fds = {{-1, 0, 0}, {-1, 0, 0}};  // the wake pipe and the listener: quiet
    for (const auto& c : s.conns_) fds.push_back({c->fd, POLLIN | POLLOUT, POLLIN | POLLOUT});
    s.serveRound(fds);
  }
  static size_t connections(const TCPStoreServer& s) { return s.conns_.size(); }
};

}  // namespace accel

using namespace accel;

extern "C" __attribute__((weak)) int accelFuzzReplaying();  // defined by replay_main.cc only

namespace {

const std::string kToken = "fuzz-token-0123456789abcdef";
constexpr long kRebuildEvery = 4096;
constexpr long kLiveEvery = 32;
// Seconds the live server has to answer: a server that stops answering fails in this long, not
// the store's 300 s. 5 s once failed an input that replays in 5 ms: the fuzzer (nice 10) was
// starved by a ThreadSanitizer test run beside it.
constexpr int kAnswerWithin = 30;

std::vector<uint8_t> handshake(int32_t rank) {
  proto::Writer w;
  w.u32(proto::kMagic);
  w.u32(proto::kVersion);
  w.i32(rank);
  w.field(kToken);
  return w.bytes();
}

int32_t rankOf(uint8_t mode) {
  const int32_t ranks[] = {-1, 0, 1, 7};
  return ranks[(mode >> 1) & 3];
}

void sendAll(int fd, const std::vector<uint8_t>& bytes) {
  FUZZ_CHECK(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()), "send()");
}

std::vector<uint8_t> drain(int fd) {
  std::vector<uint8_t> out;
  uint8_t chunk[4096];
  for (ssize_t n; (n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT)) > 0;) out.insert(out.end(), chunk, chunk + n);
  return out;
}

// ---- in memory ----

struct Memory {
  std::unique_ptr<TCPStoreServer> server;
  int good = -1;  // the well-behaved client's end
  long inputs = 0;

  void rebuild() {
    if (server) {
      ::close(good);  // a stopped server reaps nothing itself: a last round reads EOF, closes it
      TCPStoreServerTesting::round(*server);
    }
    server = std::make_unique<TCPStoreServer>("127.0.0.1", 0, kToken);
    server->stop();  // no serving thread: this thread runs the rounds
    good = TCPStoreServerTesting::connect(*server);
    sendAll(good, handshake(5));
    TCPStoreServerTesting::round(*server);
    FUZZ_CHECK(drain(good) == std::vector<uint8_t>({0, 0, 0, 0, 0}), "the good client's handshake failed");
    inputs = 0;
  }
};

// The good client's set + get, answered with the value it set.
void checkServed(Memory& m, long n) {
  const std::string key = "fuzz/probe", value = "value-" + std::to_string(n);
  proto::Writer w;
  w.beginFrame();
  w.u8(uint8_t(proto::Command::kSet));
  w.field(key);
  w.field(value);
  w.finishFrame();
  w.beginFrame();
  w.u8(uint8_t(proto::Command::kGet));
  w.field(key);
  w.i64(1000);
  w.finishFrame();
  sendAll(m.good, w.bytes());
  TCPStoreServerTesting::round(*m.server);
  proto::Writer expected;
  expected.beginFrame();
  expected.u8(uint8_t(proto::Status::kOk));
  expected.finishFrame();
  expected.beginFrame();
  expected.u8(uint8_t(proto::Status::kOk));
  expected.field(value);
  expected.finishFrame();
  FUZZ_CHECK(drain(m.good) == expected.bytes(), "the server no longer serves a well-behaved client");
}

void inMemory(const uint8_t* data, size_t size) {
  static Memory m;
  if (!m.server || m.inputs >= kRebuildEvery) m.rebuild();
  ++m.inputs;
  const uint8_t mode = size > 0 ? data[0] : 0;
  const size_t before = TCPStoreServerTesting::connections(*m.server);
  const int fd = TCPStoreServerTesting::connect(*m.server);
  std::vector<uint8_t> bytes = (mode & 1) ? handshake(rankOf(mode)) : std::vector<uint8_t>{};
  if (size > 1) bytes.insert(bytes.end(), data + 1, data + size);
  // More than the socketpair holds (a long replayed input) goes in as the server reads it.
  for (size_t at = 0; at < bytes.size();) {
    ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN) break;  // the server closed this connection: fine
    at += n > 0 ? static_cast<size_t>(n) : 0;
    TCPStoreServerTesting::round(*m.server);
    drain(fd);
  }
  checkServed(m, m.inputs);
  ::close(fd);  // the client leaves: the next round reads EOF and reaps it
  TCPStoreServerTesting::round(*m.server);
  FUZZ_CHECK(TCPStoreServerTesting::connections(*m.server) == before, "a closed connection was not reaped");
  FUZZ_CHECK(m.server->connectedClients() == 1, "the census still counts a client that left");
}

// ---- live ----

struct Live {
  std::unique_ptr<TCPStoreServer> server;
  std::unique_ptr<TCPStore> client;
  long inputs = 0;

  void rebuild() {
    client.reset();
    server.reset();  // stop(): joins the serving thread, closes every connection
    server = std::make_unique<TCPStoreServer>("127.0.0.1", 0, kToken);
    TCPStoreOptions o;
    o.rank = -1;
    o.token = kToken;
    o.timeout = std::chrono::seconds(kAnswerWithin);
    client = std::make_unique<TCPStore>("127.0.0.1", server->port(), o);
    inputs = 0;
  }
};

// The handshake reply, kAnswerWithin at most.
void expectAccepted(int fd) {
  uint8_t reply[5];
  for (size_t got = 0; got < sizeof reply;) {
    FUZZ_CHECK(fuzz::readableWithin(fd, kAnswerWithin * 1000), "no reply to a valid handshake");
    const ssize_t r = ::recv(fd, reply + got, sizeof reply - got, 0);
    if (r < 0 && errno == EINTR) continue;  // libFuzzer's SIGALRM
    FUZZ_CHECK(r > 0, "the server closed a valid handshake");
    got += static_cast<size_t>(r);
  }
  FUZZ_CHECK(reply[0] == uint8_t(proto::Status::kOk), "a valid handshake was refused");
}

int64_t roundTrips(TCPStore& client, long n) {
  const std::string key = "fuzz/probe";
  const Bytes value = toBytes("value-" + std::to_string(n));
  try {
    client.set(key, value);
    FUZZ_CHECK(client.get(key) == value, "the server returned another value");
    return client.numKeys();
  } catch (const std::exception& e) {
    FUZZ_FAIL(std::string("the server stopped serving other clients: ") + e.what());
  }
}

void live(const uint8_t* data, size_t size) {
  static Live w;
  if (!w.server || w.inputs >= kRebuildEvery / kLiveEvery) w.rebuild();
  ++w.inputs;
  const uint8_t mode = size > 0 ? data[0] : 0;
  const int fd = fuzz::connectLoopback(w.server->port());
  if (mode & 1) {
    sendAll(fd, handshake(rankOf(mode)));
    expectAccepted(fd);
  }
  if (size > 1) {
    // Never blocks: the server may have closed, or stopped reading (not this client's business).
    [[maybe_unused]] auto sent = ::send(fd, data + 1, size - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  const int64_t keys = roundTrips(*w.client, w.inputs);
  ::close(fd);
  roundTrips(*w.client, w.inputs);  // by its last reply, the closed socket has been reaped
  if (keys > 1024) w.rebuild();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static long count = 0;
  inMemory(data, size);
  if (count++ % kLiveEvery == 0 || accelFuzzReplaying) live(data, size);
  return 0;
}
