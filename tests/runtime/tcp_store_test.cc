// SPDX-License-Identifier: Apache-2.0
// TCPStore and its server: many clients, the rendezvous, large values, a hosting store that
// waits for its clients (the failures: tcp_store_failure_test.cc). 127.0.0.1 and OS-chosen
// ports only.
#include <catch2/catch.hpp>

#include "tests/runtime/tcp_store_support.h"

using namespace accel;
using namespace accel::test;

TEST_CASE("tcp store: many clients add, swap per-rank keys and meet at a barrier", "[store][tcp]") {
  const int n = GENERATE(1, 2, 3, 7, 64);
  CAPTURE(n);
  TCPStoreOptions server_options = options(-1);
  server_options.is_server = true;
  TCPStore server("127.0.0.1", 0, server_options);
  auto errors = onThreads(n, [&](int rank) {
    TCPStore store("127.0.0.1", server.port(), options(rank, n));  // waits for all n ranks
    store.add("counter", 1);
    store.set("rank/" + std::to_string(rank), toBytes("value of " + std::to_string(rank)));
    const int next = (rank + 1) % n;
    if (toString(store.get("rank/" + std::to_string(next))) != "value of " + std::to_string(next)) {
      throw std::runtime_error("wrong per-rank value");
    }
    if (store.add("arrived", 1) == n) store.set("go", toBytes("1"));
    store.wait({"go"});
    if (toString(store.get("counter")) != std::to_string(n)) {
      throw std::runtime_error("counter short after the barrier");
    }
  });
  INFO((errors.empty() ? "" : errors.front()));
  CHECK(errors.empty());
  // Every rank has left; once the server has listed them all under kDepartedRanksKey, the keys
  // are: counter, arrived, go, the departed list and the n per-rank keys.
  std::set<std::string> all;
  for (int rank = 0; rank < n; ++rank) all.insert(std::to_string(rank));
  CHECK(eventually([&] {
    if (!server.check({kDepartedRanksKey})) return false;
    auto listed = split(toString(server.get(kDepartedRanksKey)), ',');
    return std::set<std::string>(listed.begin(), listed.end()) == all;
  }));
  CHECK(server.numKeys() == n + 4);
}

TEST_CASE("tcp store: the hosting store waits for its clients to leave", "[store][tcp]") {
  TCPStoreOptions o = options(0, -1, 10s);
  o.is_server = true;
  auto host = std::make_unique<TCPStore>("127.0.0.1", 0, o);
  auto client = std::make_unique<TCPStore>("127.0.0.1", host->port(), options(1));
  std::thread leaver([&] {
    std::this_thread::sleep_for(200ms);
    client.reset();
  });
  const auto start = Clock::now();
  host.reset();
  CHECK(Clock::now() - start >= 150ms);
  CHECK(Clock::now() - start < 5s);
  leaver.join();
}

TEST_CASE("tcp store: large values cross intact, the census follows clients", "[store][tcp]") {
  TCPStoreServer server("127.0.0.1", 0, kToken);
  Bytes big(16 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  {
    TCPStore a("127.0.0.1", server.port(), options(3));
    TCPStore b("127.0.0.1", server.port(), options(5));
    a.set("big", big);
    CHECK(b.get("big") == big);
    CHECK(toString(b.compareSet("big", big, toBytes("small"))) == "small");
    CHECK(server.connectedRanks() == std::multiset<int>{3, 5});
  }
  CHECK(eventually([&] { return server.connectedClients() == 0; }));
  CHECK(server.connectedRanks().empty());
  CHECK(server.joinedRanks() == std::set<int>{3, 5});
}
