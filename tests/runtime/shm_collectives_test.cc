// SPDX-License-Identifier: Apache-2.0
// The CPU transports makeCpuBackend picks: shared memory (every rank on one host) and shared
// memory inside hosts + Gloo between them (two hosts, made with distinct host identities).
// Threads act as ranks over one HashStore; the matrix is collectives_test.cc's (world 1-4,
// counts 0 to 2^20+3, every dtype and op, bit for bit against the serial reference). Then what
// only these transports promise: every rank gets the same bits from an all_reduce of values
// whose sum depends on the order, run after run, and fallbacks and errors.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <thread>

#include "runtime/comm/cpu_transport.h"
#include "runtime/comm/process_group.h"
#include "runtime/store/hash_store.h"
#include "tests/runtime/collective_checks.h"
#include "tests/runtime/exchange_checks.h"

using namespace accel;
using namespace accel::test;

namespace {

// Rank r's host identity in a layout: "one" puts every rank on one host; "two" alternates
// ranks between two hosts (non-contiguous, so the hierarchy must put blocks back in rank order).
// "two" also uses 4 KiB chunks, so that every count above 1024 bytes takes several chunks
// even under the sanitizers' short counts (ACCEL_TEST_QUICK).
std::string hostOf(const std::string& layout, int r) { return layout == "one" ? "A" : (r % 2 ? "B" : "A"); }

// Runs body(rank, backend) on `world` threads; the backend's name must be `expect_name`.
void onRanks(int world, const std::string& layout, const char* expect_name,
             const std::function<void(int, Backend&)>& body) {
  HashStore store;
  store.setTimeout(std::chrono::seconds(60));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(world)), names(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        CpuTransportOptions o;
        o.gloo.timeout = std::chrono::seconds(60);
        o.host_id = hostOf(layout, r);
        if (layout == "two") o.shm_chunk_bytes = 4096;
        auto backend = makeCpuBackend(store, r, world, o);
        names[static_cast<size_t>(r)] = backend->name();
        body(r, *backend);
        backend->barrier()->wait();  // no rank tears its group down while another still uses it
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r << " of " << world << ", layout " << layout);
    CHECK(errors[static_cast<size_t>(r)].empty());
    if (!errors[static_cast<size_t>(r)].empty()) FAIL(errors[static_cast<size_t>(r)]);
    if (world > 1) CHECK(names[static_cast<size_t>(r)] == std::string(expect_name));
  }
}

// The transport a world of this size gets in this layout.
const char* transportFor(int world, const std::string& layout) {
  if (world == 1) return "gloo";
  if (layout == "one") return "shm";
  return world == 2 ? "gloo" : "shm+gloo";  // two hosts of one rank each: nothing to share
}

void allReduceMatrix(const std::string& layout) {
  // Two hosts: 4 KiB chunks, so the large count adds time, not paths (collective_checks.h).
  const auto quick = layout == "two" ? std::make_unique<QuickCounts>() : nullptr;
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    const AllReduceExpected expected = allReduceExpected(world);
    onRanks(world, layout, transportFor(world, layout),
            [&](int rank, Backend& b) { checkAllReduce(b, rank, world, hostPlacement(), expected, bad); });
    INFO("world " << world << ", layout " << layout);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

void otherMatrix(const std::string& layout) {
  // Two hosts: 4 KiB chunks, so the large count adds time, not paths (collective_checks.h).
  const auto quick = layout == "two" ? std::make_unique<QuickCounts>() : nullptr;
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    onRanks(world, layout, transportFor(world, layout),
            [&](int rank, Backend& b) { checkOtherCollectives(b, rank, world, hostPlacement(), bad); });
    INFO("world " << world << ", layout " << layout);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

void allToAllMatrix(const std::string& layout) {
  // Two hosts: 4 KiB chunks, so the large count adds time, not paths (collective_checks.h).
  const auto quick = layout == "two" ? std::make_unique<QuickCounts>() : nullptr;
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    onRanks(world, layout, transportFor(world, layout),
            [&](int rank, Backend& b) { checkAllToAll(b, rank, world, hostPlacement(), bad); });
    INFO("world " << world << ", layout " << layout);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

}  // namespace

TEST_CASE("shared memory: all_reduce matches the serial reference", "[comm][shm]") { allReduceMatrix("one"); }

TEST_CASE("hierarchical (two hosts): all_reduce matches the serial reference", "[comm][shm]") {
  allReduceMatrix("two");
}

TEST_CASE("shared memory: broadcast, all_gather(v), reduce_scatter, gather, scatter, barrier", "[comm][shm]") {
  otherMatrix("one");
}

TEST_CASE("hierarchical (two hosts): broadcast, all_gather(v), reduce_scatter, gather, scatter, barrier",
          "[comm][shm]") {
  otherMatrix("two");
}

TEST_CASE("shared memory: all_to_all and all_to_all_v, bit for bit", "[comm][shm]") { allToAllMatrix("one"); }

TEST_CASE("hierarchical (two hosts): all_to_all and all_to_all_v, bit for bit", "[comm][shm]") {
  allToAllMatrix("two");
}

TEST_CASE("shared memory and hierarchical: the front door refuses the same misuse as every transport", "[comm][shm]") {
  for (std::string layout : {"one", "two"}) {
    for (int world : {3, 4}) {
      Mismatches bad;
      onRanks(world, layout, transportFor(world, layout),
              [&](int rank, Backend& b) { checkMisuse(b, rank, world, bad); });
      INFO("world " << world << ", layout " << layout);
      CHECK(bad.list.empty());
      for (const auto& m : bad.list) WARN(m);
    }
  }
}

TEST_CASE("shared memory: all_to_all_v counts that do not match are refused on every rank", "[comm][shm]") {
  // Rank 0 sends rank 1 two elements; rank 1 expects three. Every rank finds it at the same step.
  HashStore store;
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      CpuTransportOptions o;
      o.host_id = "A";
      auto b = makeCpuBackend(store, r, 3, o);
      std::vector<size_t> send(3, 1), recv(3, 1);
      if (r == 0) send[1] = 2;
      if (r == 1) recv[0] = 3;
      std::vector<float> in(4 + (r == 0 ? 1 : 0)), out(3 + (r == 1 ? 2 : 0));
      try {
        b->allToAllV(cpuTensor(in.data(), in.size() - 1), cpuTensor(out.data(), out.size()), send, recv)->wait();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    INFO(e);
    CHECK(e.find("rank 0 sends rank 1 2 elements, but rank 1 expects 3 from rank 0") != std::string::npos);
  }
}

TEST_CASE("shared memory and hierarchical: every rank gets the same bits, run after run", "[comm][shm]") {
  // Random floats: their sum depends on the order of the additions, so equal bits on every rank
  // and in every run show that one fixed order is used (the ring of Gloo would show it too).
  const size_t n = (1 << 18) + 5;  // several chunks, and a ragged last one
  for (std::string layout : {"one", "two"}) {
    for (DataType t : {DataType::F32, DataType::BF16}) {
      std::vector<std::vector<uint8_t>> first;
      for (int run = 0; run < 2; ++run) {
        std::vector<std::vector<uint8_t>> got(3);
        onRanks(3, layout, layout == "one" ? "shm" : "shm+gloo", [&](int rank, Backend& b) {
          std::mt19937 gen(static_cast<unsigned>(rank) * 7919u + 1);
          std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
          std::vector<float> f(n);
          for (auto& x : f) x = value(gen);
          std::vector<uint8_t> buf(n * dtypeSize(t));
          for (size_t i = 0; i < n; ++i) {
            if (t == DataType::F32) {
              std::memcpy(&buf[i * 4], &f[i], 4);
            } else {
              uint32_t bits;
              std::memcpy(&bits, &f[i], 4);
              const uint16_t h = static_cast<uint16_t>(bits >> 16);
              std::memcpy(&buf[i * 2], &h, 2);
            }
          }
          b.allReduce(view(buf, t), ReduceOp::Sum)->wait();
          got[static_cast<size_t>(rank)] = std::move(buf);
        });
        INFO("layout " << layout << ", " << dtypeName(t) << ", run " << run);
        CHECK(got[0] == got[1]);
        CHECK(got[0] == got[2]);
        if (run == 0) first = got;
        CHECK(got[0] == first[0]);
      }
    }
  }
}

TEST_CASE("shared memory: subgroups, overlapping asynchronous operations, ACCEL_SHM=0", "[comm][shm]") {
  HashStore store;
  store.setTimeout(std::chrono::seconds(30));
  std::vector<std::thread> threads;
  std::vector<int> odd_sum(4, -1);
  std::vector<std::string> names(4), sub_names(4), off_names(4);
  std::vector<int> async_ok(4, 0);
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      CpuTransportOptions o;
      o.host_id = "A";
      ProcessGroup world(store, "pg", r, 4, [o](Store& s, int rank, int n, const std::vector<int>&) {
        return makeCpuBackend(s, rank, n, o);
      });
      names[static_cast<size_t>(r)] = world.backend().name();
      auto odd = world.newGroup({1, 3});
      int value = r + 1;
      if (odd) {
        sub_names[static_cast<size_t>(r)] = odd->backend().name();
        odd->backend().allReduce(cpuTensor(&value, 1), ReduceOp::Sum)->wait();
      }
      odd_sum[static_cast<size_t>(r)] = value;
      // Many operations in flight at once, small (inline) and large (queued) mixed: they must run
      // in order on every rank.
      std::vector<std::vector<int>> bufs;
      for (int i = 0; i < 12; ++i) bufs.emplace_back(i % 3 == 0 ? 100000 : 10, r + i);
      std::vector<WorkPtr> works;
      for (auto& b : bufs) works.push_back(world.backend().allReduce(cpuTensor(b.data(), b.size()), ReduceOp::Sum));
      for (auto& w : works) w->wait();
      bool ok = true;
      for (int i = 0; i < 12; ++i)
        ok &= bufs[static_cast<size_t>(i)].front() == 6 + 4 * i && bufs[static_cast<size_t>(i)].back() == 6 + 4 * i;
      async_ok[static_cast<size_t>(r)] = ok;
      CpuTransportOptions off = o;
      off.shm = false;
      ProcessGroup plain(store, "off", r, 4, [off](Store& s, int rank, int n, const std::vector<int>&) {
        return makeCpuBackend(s, rank, n, off);
      });
      off_names[static_cast<size_t>(r)] = plain.backend().name();
      world.backend().barrier()->wait();
    });
  }
  for (auto& t : threads) t.join();
  CHECK(odd_sum == std::vector<int>{1, 6, 3, 6});
  CHECK(names == std::vector<std::string>(4, "shm"));
  CHECK(sub_names[1] == "shm");
  CHECK(async_ok == std::vector<int>(4, 1));
  CHECK(off_names == std::vector<std::string>(4, "gloo"));
}

TEST_CASE("shared memory: misuse is an error naming the sizes, and the log names the transport", "[comm][shm]") {
  HashStore store;
  std::vector<std::thread> threads;
  std::vector<std::string> logged(2);
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      CpuTransportOptions o;
      o.host_id = "A";
      o.log = [&, r](const std::string& line) { logged[static_cast<size_t>(r)] += line; };
      auto b = makeCpuBackend(store, r, 2, o);
      if (r == 0) {
        float x = 1;
        std::vector<float> too_small(1);
        CHECK_THROWS_WITH(b->allGather(cpuTensor(&x, 1), cpuTensor(too_small.data(), 1)),
                          Catch::Contains("output holds 1 elements, expected 2 x 1"));
        Tensor gpu = cpuTensor(&x, 1);
        gpu.device = DeviceType::CUDA;
        CHECK_THROWS_WITH(b->allReduce(gpu, ReduceOp::Sum),
                          Catch::Contains("shared-memory collectives work on CPU memory"));
        CHECK_THROWS_WITH(b->broadcast(cpuTensor(&x, 1), 2),
                          Catch::Contains("root 2 is not a rank of this group of 2"));
      }
      b->barrier()->wait();
    });
  }
  for (auto& t : threads) t.join();
  CHECK(logged[0] == "2 ranks on one host: shared memory");
  CHECK(logged[1].empty());
}
