// SPDX-License-Identifier: Apache-2.0
// Real worker processes over shared memory, one of them SIGKILLed in the middle of a stream of
// 16 MiB all_reduces: the others must fail at once (not at their 5-minute timeout) naming it,
// and nothing may be left behind, neither in /dev/shm nor as a process.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include "tests/support/process.h"

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
