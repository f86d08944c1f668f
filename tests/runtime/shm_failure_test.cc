// SPDX-License-Identifier: Apache-2.0
// Real worker processes over shared memory, one of them SIGKILLed in the middle of a stream of
// 16 MiB all_reduces: the others must fail at once (not at their 5-minute timeout) naming it,
// and nothing may be left behind, neither in /dev/shm nor as a process. And hosts whose shared
// memory cannot be mapped: their Gloo fallback must pass a leader's failure on just as fast.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "runtime/comm/cpu_transport.h"
#include "runtime/store/hash_store.h"
#include "tests/support/process.h"

using namespace accel;
using namespace accel::test;

namespace {

std::set<std::string> devShm() {
  std::set<std::string> names;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d)) names.insert(e->d_name);
    ::closedir(d);
  }
  return names;
}

// "all_reduce (f32 x 4194304) max failed on rank R of 3: rank V (pid P, on this machine) exited".
std::string killedMessage(int r, int victim, pid_t pid) {
  return "error: all_reduce \\(f32 x 4194304\\) max failed on rank " + std::to_string(r) + " of 3: rank " +
         std::to_string(victim) + " \\(pid " + std::to_string(pid) + ", on this machine\\) exited";
}

}  // namespace

TEST_CASE("shared memory: a rank SIGKILLed mid-collective is named by the others at once, nothing left",
          "[accelerator][shm][failure]") {
  for (int victim : {1, 0}) {  // rank 0 also hosts the store
    const auto before = devShm();
    TempDir dir;
    const std::string port = std::to_string(freeLoopbackPort());
    std::vector<std::unique_ptr<BackgroundProcess>> ranks;
    for (int r = 0; r < 3; ++r) {
      auto env = hermeticEnv(dir, {{"RANK", std::to_string(r)},
                                   {"WORLD_SIZE", "3"},
                                   {"LOCAL_RANK", std::to_string(r)},
                                   {"LOCAL_WORLD_SIZE", "3"},
                                   {"MASTER_ADDR", "127.0.0.1"},
                                   {"MASTER_PORT", port},
                                   {"ACCEL_STORE_TOKEN", "kill-test"},
                                   {"ACCEL_DEBUG", "INFO"}});
      ranks.push_back(
          std::make_unique<BackgroundProcess>(std::vector<std::string>{runtimeWorker(), "reduce-loop"}, env));
    }
    for (auto& r : ranks) REQUIRE(r->waitForOutput("looping", 1, 60000));
    CHECK(std::regex_search(ranks[0]->output(), std::regex("rank 0: group of 3 ranks on one host: shared memory")));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const pid_t victim_pid = ranks[static_cast<size_t>(victim)]->pid();
    ranks[static_cast<size_t>(victim)]->signal(SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    for (int r = 0; r < 3; ++r) {
      auto res = ranks[static_cast<size_t>(r)]->wait(60000);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
      INFO("victim " << victim << ", rank " << r << ": " << res.err);
      if (r == victim) {
        CHECK(res.exit_code == 128 + SIGKILL);
        continue;
      }
      CHECK(res.exit_code == 3);
      CHECK(std::regex_search(res.err, std::regex(killedMessage(r, victim, victim_pid))));
      CHECK(seconds < 10);  // the pidfd, not the timeout (5 minutes)
    }
    for (auto& r : ranks) CHECK_FALSE(processAlive(r->pid()));
    CHECK(devShm() == before);  // the segment never had a name there
  }
}

TEST_CASE("hierarchical over Gloo fallbacks: a failed leader's host peers fail at once, naming the cause",
          "[comm][shm][failure]") {
  // Two hosts of two ranks (ranks 0,2 on A, 1,3 on B; threads as ranks) whose shared memory cannot
  // be mapped (chunks of 2^61 bytes), so every host's ranks fall back to Gloo. Host A's ranks
  // all_reduce 5 elements, host B's 6: the leaders (ranks 0 and 1) find the difference, and
  // their host peers, waiting for the leader's broadcast, must fail with them, not at their
  // 60-second timeout.
  HashStore store;
  store.setTimeout(std::chrono::seconds(60));
  std::vector<std::string> errors(4), transport(4);
  std::vector<double> seconds(4);
  std::mutex mutex;
  std::condition_variable all_finished;
  int finished = 0;
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      CpuTransportOptions o;
      o.gloo.timeout = std::chrono::seconds(60);
      o.host_id = r % 2 ? "B" : "A";
      o.shm_chunk_bytes = size_t{1} << 61;
      o.warn = [&, r](const std::string& line) { transport[static_cast<size_t>(r)] = line; };
      auto b = makeCpuBackend(store, r, 4, o);
      std::vector<float> data(r % 2 ? 6 : 5, 1.0f);
      const auto start = std::chrono::steady_clock::now();
      try {
        b->allReduce(cpuTensor(data.data(), data.size()), ReduceOp::Sum)->wait();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
      seconds[static_cast<size_t>(r)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Every rank keeps its group until all have failed (or 30 s): a closed connection of a
      // rank that is done must not be what tells the others.
      std::unique_lock<std::mutex> lock(mutex);
      ++finished;
      all_finished.notify_all();
      all_finished.wait_for(lock, std::chrono::seconds(30), [&] { return finished == 4; });
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r << " after " << seconds[static_cast<size_t>(r)] << " s: " << errors[static_cast<size_t>(r)]);
    if (r < 2) CHECK(transport[static_cast<size_t>(r)].find("they use Gloo") != std::string::npos);
    CHECK(errors[static_cast<size_t>(r)].find("ranks called different collectives: rank 0 called #1 all_reduce (f32 "
                                              "x 5) sum; rank 1 called #1 all_reduce (f32 x 6) sum") !=
          std::string::npos);
    CHECK(seconds[static_cast<size_t>(r)] < 15.0);
  }
}
