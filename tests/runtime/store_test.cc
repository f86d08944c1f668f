// SPDX-License-Identifier: Apache-2.0
// One suite, every store: HashStore, FileStore, PrefixStore over a HashStore, and a TCPStore
// client of an in-process server must all behave as the c10d Store contract says.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/store/file_store.h"
#include "runtime/store/hash_store.h"
#include "runtime/store/prefix_store.h"
#include "runtime/store/tcp_store.h"
#include "tests/support/process.h"

using namespace accel;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Each fixture gives two handles on one store: `a` and `peer`, which another thread can use
// while `a` is blocked (a TCPStore connection serves one request at a time, as in c10d).
// setTimeout() sets get()'s timeout on `a`.
struct HashFixture {
  HashStore store;
  Store& a() { return store; }
  Store& peer() { return store; }
  void setTimeout(std::chrono::milliseconds t) { a().setTimeout(t); }
};

struct FileFixture {
  accel::test::TempDir dir;
  FileStore first{dir.file("store")};
  FileStore second{dir.file("store")};
  Store& a() { return first; }
  Store& peer() { return second; }
  void setTimeout(std::chrono::milliseconds t) { a().setTimeout(t); }
};

struct PrefixFixture {
  HashStore base;
  PrefixStore first{"group0", base};
  PrefixStore second{"group0", base};
  Store& a() { return first; }
  Store& peer() { return second; }
  // PrefixStore::get() blocks with the base store's timeout: Store::setTimeout is not virtual,
  // so a PrefixStore cannot pass its own on.
  void setTimeout(std::chrono::milliseconds t) {
    first.setTimeout(t);
    base.setTimeout(t);
  }
};

TCPStoreOptions tcpOptions(bool is_server) {
  TCPStoreOptions o;
  o.is_server = is_server;
  o.rank = -1;
  o.token = "suite-token";
  o.timeout = 10s;
  return o;
}

struct TCPFixture {
  TCPStore server{"127.0.0.1", 0, tcpOptions(true)};
  TCPStore client{"127.0.0.1", server.port(), tcpOptions(false)};
  Store& a() { return server; }
  Store& peer() { return client; }
  void setTimeout(std::chrono::milliseconds t) { a().setTimeout(t); }
};

Bytes bytes(const std::string& s) { return toBytes(s); }

}  // namespace

#define STORE_TYPES HashFixture, FileFixture, PrefixFixture, TCPFixture

TEMPLATE_TEST_CASE("store: set then get, from either handle", "[store]", STORE_TYPES) {
  TestType f;
  f.a().set("k", bytes("v1"));
  CHECK(toString(f.a().get("k")) == "v1");
  CHECK(toString(f.peer().get("k")) == "v1");
  f.peer().set("k", bytes("v2"));
  CHECK(toString(f.a().get("k")) == "v2");
  const Bytes binary{0, 1, 0, 255, 10};
  f.a().set("binary", binary);
  CHECK(f.peer().get("binary") == binary);
  f.a().set("empty", {});
  CHECK(f.peer().get("empty").empty());
}

TEMPLATE_TEST_CASE("store: a blocked get is released by another thread's set", "[store]", STORE_TYPES) {
  TestType f;
  f.setTimeout(10s);
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    f.peer().set("late", bytes("here"));
  });
  const auto start = Clock::now();
  CHECK(toString(f.a().get("late")) == "here");
  CHECK(Clock::now() - start < 5s);
  setter.join();
}

TEMPLATE_TEST_CASE("store: get times out naming the key", "[store][failure]", STORE_TYPES) {
  TestType f;
  f.setTimeout(300ms);
  const auto start = Clock::now();
  try {
    f.a().get("never-set");
    FAIL("get returned");
  } catch (const StoreTimeout& e) {
    CHECK_THAT(e.what(), Catch::Contains("timed out after 300 ms") && Catch::Contains("never-set"));
  }
  CHECK(Clock::now() - start >= 290ms);
  CHECK(Clock::now() - start < 5s);
  f.a().set("after", bytes("ok"));  // the store still works after a timeout
  CHECK(toString(f.a().get("after")) == "ok");
}

TEMPLATE_TEST_CASE("store: add starts a missing key at 0 and stores decimal text", "[store]", STORE_TYPES) {
  TestType f;
  CHECK(f.a().add("c", 1) == 1);
  CHECK(f.peer().add("c", 5) == 6);
  CHECK(f.a().add("c", -10) == -4);
  CHECK(toString(f.peer().get("c")) == "-4");
  CHECK(f.a().add("c", 0) == -4);
}

TEMPLATE_TEST_CASE("store: concurrent adds from 8 threads are atomic", "[store]", STORE_TYPES) {
  TestType f;
  constexpr int kThreads = 8, kAdds = 50;
  std::mutex mutex;
  std::vector<int64_t> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store& s = t % 2 ? f.peer() : f.a();
      for (int i = 0; i < kAdds; ++i) {
        int64_t v = s.add("counter", 1);
        std::lock_guard<std::mutex> lock(mutex);
        seen.push_back(v);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(toString(f.a().get("counter")) == std::to_string(kThreads * kAdds));
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> expected(kThreads * kAdds);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int64_t>(i) + 1;
  CHECK(seen == expected);  // every intermediate value handed out exactly once
}

TEMPLATE_TEST_CASE("store: check never blocks", "[store]", STORE_TYPES) {
  TestType f;
  CHECK(f.a().check({}));
  CHECK_FALSE(f.a().check({"x"}));
  f.peer().set("x", bytes("1"));
  CHECK(f.a().check({"x"}));
  CHECK_FALSE(f.a().check({"x", "y"}));
  f.a().set("y", bytes("2"));
  CHECK(f.peer().check({"x", "y"}));
}

TEMPLATE_TEST_CASE("store: wait returns once all keys exist, or names the missing ones", "[store][failure]",
                   STORE_TYPES) {
  TestType f;
  f.a().set("w1", bytes("1"));
  f.a().wait({"w1"}, 1s);
  try {
    f.a().wait({"w1", "w2", "w3"}, 300ms);
    FAIL("wait returned");
  } catch (const StoreTimeout& e) {
    // Only the list after "key(s)": the file store's message starts with its random temporary
    // path, which once contained "w1" ("accel-store-wSw1e1").
    const std::string what = e.what();
    const auto keys = what.find("key(s)");
    REQUIRE(keys != std::string::npos);
    CHECK_THAT(what.substr(keys), Catch::Contains("w2") && Catch::Contains("w3") && !Catch::Contains("w1"));
  }
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    f.peer().set("w2", bytes("2"));
    f.peer().set("w3", bytes("3"));
  });
  f.a().wait({"w1", "w2", "w3"}, 10s);
  setter.join();
}

TEMPLATE_TEST_CASE("store: deleteKey and numKeys", "[store]", STORE_TYPES) {
  TestType f;
  const int64_t before = f.a().numKeys();
  f.a().set("d1", bytes("1"));
  f.a().set("d2", bytes("2"));
  f.peer().set("d2", bytes("2 again"));
  CHECK(f.a().numKeys() == before + 2);
  CHECK(f.peer().deleteKey("d1"));
  CHECK_FALSE(f.a().deleteKey("d1"));
  CHECK_FALSE(f.a().check({"d1"}));
  CHECK(f.a().numKeys() == before + 1);
  f.a().add("d3", 1);
  CHECK(f.peer().numKeys() == before + 2);
}

TEMPLATE_TEST_CASE("store: compareSet", "[store]", STORE_TYPES) {
  TestType f;
  SECTION("missing key, empty expected: creates it") {
    CHECK(toString(f.a().compareSet("cas", {}, bytes("first"))) == "first");
    CHECK(toString(f.peer().get("cas")) == "first");
  }
  SECTION("matching expected: swaps") {
    f.a().set("cas", bytes("old"));
    CHECK(toString(f.peer().compareSet("cas", bytes("old"), bytes("new"))) == "new");
    CHECK(toString(f.a().get("cas")) == "new");
  }
  SECTION("mismatching expected: returns the current value, unchanged") {
    f.a().set("cas", bytes("current"));
    CHECK(toString(f.a().compareSet("cas", bytes("other"), bytes("new"))) == "current");
    CHECK(toString(f.peer().get("cas")) == "current");
  }
  SECTION("missing key, non-empty expected: stays missing") {
    CHECK(f.a().compareSet("cas", bytes("x"), bytes("new")).empty());
    CHECK_FALSE(f.peer().check({"cas"}));
  }
}

// FileStore's own behaviour: the file, not the Store contract.

TEST_CASE("file store: a missing directory is an error naming it", "[store][file]") {
  accel::test::TempDir dir;
  const auto missing = std::filesystem::path(dir.file("no-such-dir"));
  try {
    FileStore store((missing / "store").string());
    FAIL("constructed");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "file store: directory " + missing.string() + " does not exist");
  }
}

TEST_CASE("file store: the last of world_size users deletes the file", "[store][file]") {
  accel::test::TempDir dir;
  const auto path = std::filesystem::path(dir.file("store"));
  auto a = std::make_unique<FileStore>(path.string(), 2);
  auto b = std::make_unique<FileStore>(path.string(), 2);
  a->set("k", bytes("v"));
  a.reset();
  CHECK(std::filesystem::exists(path));
  CHECK(toString(b->get("k")) == "v");
  b.reset();
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("file store: a torn last record is cut off, other files are refused", "[store][file][failure]") {
  accel::test::TempDir dir;
  const auto path = dir.file("store");
  {
    FileStore store(path);
    store.set("whole", bytes("1"));
  }
  {
    std::FILE* f = std::fopen(path.c_str(), "ab");
    REQUIRE(f);
    std::fwrite("\x01\x05\x00", 1, 3, f);  // a writer that died three bytes into a record
    std::fclose(f);
  }
  FileStore store(path);
  CHECK(toString(store.get("whole")) == "1");
  store.set("next", bytes("2"));
  FileStore again(path);
  CHECK(toString(again.get("next")) == "2");

  const auto other = dir.file("other");
  {
    std::FILE* f = std::fopen(other.c_str(), "wb");
    std::fputs("not a store", f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(FileStore(other), Catch::Contains("is not a store file"));
}
