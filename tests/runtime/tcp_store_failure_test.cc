// SPDX-License-Identifier: Apache-2.0
// TCPStore's server under misuse and failure: wrong tokens, versions and magic, garbage,
// vanishing clients, clients that never read, timeouts that name the keys and the ranks, a lost
// server. 127.0.0.1 and OS-chosen ports only.
#include <catch2/catch.hpp>

#include "tests/runtime/tcp_store_support.h"

using namespace accel;
using namespace accel::test;

TEST_CASE("tcp store: a wrong token is refused, good clients are still served", "[store][tcp][failure]") {
  TCPStoreServer server("127.0.0.1", 0, kToken);
  TCPStore good("127.0.0.1", server.port(), options(0));
  good.set("before", toBytes("1"));
  try {
    TCPStore intruder("127.0.0.1", server.port(), options(1, -1, 2s, "another-jobs-token"));
    FAIL("the intruder was let in");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "store at " + where(server.port()) +
                                       " refused this client: wrong run token (another job is using this port?)");
  }
  CHECK(server.joinedRanks() == std::set<int>{0});
  CHECK(toString(good.get("before")) == "1");
  TCPStore late("127.0.0.1", server.port(), options(2));
  CHECK(late.add("n", 2) == 2);
}

TEST_CASE("tcp store: a wrong version or magic is refused, then closed", "[store][tcp][failure]") {
  TCPStoreServer server("127.0.0.1", 0, kToken);
  {
    RawSocket raw(server.port());
    raw.send(handshake(kToken, proto::kVersion + 1));
    auto [status, reason] = readHandshakeReply(raw);
    CHECK(status == uint8_t(proto::Status::kRefusedVersion));
    CHECK_THAT(reason, Catch::Contains("protocol version 2"));
    CHECK(raw.receive(1).empty());  // closed
  }
  {
    RawSocket raw(server.port());
    raw.send(toBytes("GET / HTTP/1.1\r\n\r\n"));
    auto [status, reason] = readHandshakeReply(raw);
    CHECK(status == uint8_t(proto::Status::kRefusedMagic));
    CHECK(raw.receive(1).empty());
  }
  TCPStore good("127.0.0.1", server.port(), options(0));
  CHECK(good.add("alive", 1) == 1);
}

TEST_CASE("tcp store: the server survives garbage and abrupt disconnects", "[store][tcp][failure]") {
  TCPStoreServer server("127.0.0.1", 0, kToken);
  TCPStore good("127.0.0.1", server.port(), options(0));
  good.setTimeout(10s);
  // A good client parked in a wait across all the abuse below.
  std::thread waiter([&] {
    TCPStore patient("127.0.0.1", server.port(), options(1));
    patient.wait({"released"}, 10s);
    patient.set("waiter-done", toBytes("1"));
  });
  REQUIRE(eventually([&] { return server.connectedClients() == 2; }));

  SECTION("random bytes") {
    std::mt19937 rng(42);
    std::vector<uint8_t> junk(64 << 10);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    RawSocket raw(server.port());
    raw.send(junk);
    CHECK(raw.receive(1 << 20).size() < 4096);  // at most a refusal, then closed
  }
  SECTION("an absurd frame length after a good handshake") {
    RawSocket raw(server.port());
    raw.send(handshake(kToken));
    CHECK(readHandshakeReply(raw).first == uint8_t(proto::Status::kOk));
    raw.send({1, 0, 0, 0, uint8_t(proto::Command::kPing)});
    CHECK(raw.receive(5) == std::vector<uint8_t>{1, 0, 0, 0, uint8_t(proto::Status::kOk)});
    raw.send({0xff, 0xff, 0xff, 0xff, uint8_t(proto::Command::kGet)});
    CHECK(raw.receive(1).empty());
  }
  SECTION("an unknown command and a truncated field") {
    const uint8_t set = uint8_t(proto::Command::kSet);
    for (auto frame :
         {std::vector<uint8_t>{1, 0, 0, 0, 200}, std::vector<uint8_t>{6, 0, 0, 0, set, 50, 0, 0, 0, 'k'}}) {
      RawSocket raw(server.port());
      raw.send(handshake(kToken));
      CHECK(readHandshakeReply(raw).first == uint8_t(proto::Status::kOk));
      raw.send(frame);
      CHECK(raw.receive(1).empty());
    }
  }
  SECTION("half a handshake, half a frame, then gone") {
    RawSocket a(server.port());
    auto h = handshake(kToken);
    a.send(std::vector<uint8_t>(h.begin(), h.begin() + 10));
    RawSocket b(server.port());
    b.send(h);
    b.send({20, 0, 0, 0, uint8_t(proto::Command::kSet), 3});
    a.close();
    b.close();
  }
  SECTION("a client vanishing while its wait is parked") {
    RawSocket raw(server.port());
    raw.send(handshake(kToken));
    CHECK(readHandshakeReply(raw).first == uint8_t(proto::Status::kOk));
    auto w = proto::Writer();
    w.beginFrame();
    w.u8(uint8_t(proto::Command::kWait));
    w.keys({"released"});
    w.i64(60'000);
    w.finishFrame();
    raw.send(w.bytes());
    linger hard{1, 0};  // close with a RST, the most abrupt way out
    ::setsockopt(raw.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    raw.close();
  }
  SECTION("a client that never reads its replies") {
    good.set("big", Bytes(1 << 20, 7));
    RawSocket raw(server.port());
    raw.send(handshake(kToken));
    CHECK(readHandshakeReply(raw).first == uint8_t(proto::Status::kOk));
    auto w = proto::Writer();
    for (int i = 0; i < 64; ++i) {
      w.beginFrame();
      w.u8(uint8_t(proto::Command::kGet));
      w.field(std::string("big"));
      w.i64(1000);
      w.finishFrame();
    }
    ::send(raw.fd, w.bytes().data(), w.bytes().size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    CHECK(good.add("still-served", 1) == 1);
    CHECK(good.get("big").size() == 1u << 20);
  }

  CHECK(good.add("alive", 1) == 1);
  good.set("released", toBytes("1"));
  CHECK(toString(good.get("waiter-done")) == "1");
  waiter.join();
  CHECK(eventually([&] { return server.connectedClients() == 1; }));  // only `good` is left
}

TEST_CASE("tcp store: rendezvous timeout lists the missing ranks", "[store][tcp][failure]") {
  TCPStoreServer server("127.0.0.1", 0, kToken);
  // Ranks `ranks` of a world of 4 start; the errors their constructors threw.
  auto start = [&](std::vector<int> ranks, std::chrono::milliseconds timeout) {
    return onThreads(static_cast<int>(ranks.size()),
                     [&](int i) { TCPStore s("127.0.0.1", server.port(), options(ranks[i], 4, timeout)); });
  };
  // 3 s: the ranks that do start are threads of this process, joined in milliseconds on a quiet
  // machine; 0.5 s once was not enough under load (ASan, 1 run in ~2,600).
  const std::string joined = " ranks joined " + where(server.port()) + " after 3 s; missing: ";
  SECTION("one missing") {
    auto errors = start({0, 1, 3}, 3s);
    REQUIRE(errors.size() == 3);
    for (const auto& e : errors) {
      CHECK_THAT(e, Catch::EndsWith("rendezvous: 3/4" + joined + "rank 2"));
    }
  }
  SECTION("two missing") {
    auto errors = start({0, 2}, 3s);
    REQUIRE(errors.size() == 2);
    for (const auto& e : errors) {
      CHECK_THAT(e, Catch::EndsWith("rendezvous: 2/4" + joined + "ranks 1, 3"));
    }
  }
  SECTION("everyone there") { CHECK(start({0, 1, 2, 3}, 5s).empty()); }
}

TEST_CASE("tcp store: a store nobody serves is reported after the timeout", "[store][tcp][failure]") {
  // A bound but not listening socket: connections are refused and no one else can take the port.
  const auto [holder, port] = boundLoopbackSocket();
  REQUIRE(holder >= 0);
  const auto start = Clock::now();
  try {
    TCPStore s("127.0.0.1", port, options(1, 2, 300ms));
    FAIL("connected");
  } catch (const StoreTimeout& e) {
    CHECK(std::string(e.what()) == "rendezvous: cannot reach the store at " + where(port) +
                                       " after 0.3 s (connection refused); is rank 0 running?");
  }
  CHECK(Clock::now() - start < 3s);
  ::close(holder);
}

TEST_CASE("tcp store: timeouts name the keys and the address, and the client lives on", "[store][tcp][failure]") {
  TCPStoreServer server("127.0.0.1", 0, kToken);
  TCPStore store("127.0.0.1", server.port(), options(0, -1, 300ms));
  const std::string at = "store at " + where(server.port());
  CHECK_THROWS_WITH(store.get("nope"), at + ": timed out after 300 ms waiting for key(s) nope");
  CHECK_THROWS_WITH(store.wait({"a", "b"}, 200ms), at + ": timed out after 200 ms waiting for key(s) a, b");
  store.set("a", toBytes("1"));
  CHECK(toString(store.get("a")) == "1");
  CHECK_THROWS_WITH(store.set(std::string(proto::kMaxKeyBytes + 1, 'k'), {}),
                    Catch::Contains("over the 65536-byte limit"));
}

TEST_CASE("tcp store: a lost server fails blocked calls at once", "[store][tcp][failure]") {
  auto server = std::make_unique<TCPStoreServer>("127.0.0.1", 0, kToken);
  TCPStore store("127.0.0.1", server->port(), options(0, -1, 30s));
  std::thread stopper([&] {
    std::this_thread::sleep_for(100ms);
    server->stop();
  });
  const auto start = Clock::now();
  CHECK_THROWS_WITH(store.get("never"), Catch::Contains("closed the connection (did rank 0 exit?)"));
  CHECK(Clock::now() - start < 5s);
  stopper.join();
  CHECK_THROWS_WITH(store.add("x", 1), Catch::Contains("lost by an earlier call"));
}

TEST_CASE("tcp store: a taken port is a clear error", "[store][tcp][failure]") {
  TCPStoreServer first("127.0.0.1", 0, kToken);
  CHECK_THROWS_WITH(TCPStoreServer("127.0.0.1", first.port(), kToken),
                    "store: cannot listen on " + where(first.port()) + ": address already in use");
}

TEST_CASE("tcp store: ranks started before rank 0 connect once it listens", "[store][tcp][failure]") {
  // The launcher's pattern: rank 0 hosts on a known port and waits for everyone. The port is
  // one the OS just handed out (bound, read, released).
  const auto [probe, port] = boundLoopbackSocket();
  REQUIRE(probe >= 0);
  ::close(probe);
  auto errors = onThreads(4, [&](int rank) {
    TCPStoreOptions o = options(rank, 4, 10s);
    o.is_server = rank == 0;
    if (rank == 0) std::this_thread::sleep_for(200ms);  // the others retry meanwhile
    TCPStore store("127.0.0.1", port, o);
    store.add("joined", 1);
    store.set("bye/" + std::to_string(rank), {});
    store.wait({"bye/0", "bye/1", "bye/2", "bye/3"});
  });
  INFO((errors.empty() ? "" : errors.front()));
  CHECK(errors.empty());
}
