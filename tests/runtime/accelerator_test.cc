// SPDX-License-Identifier: Apache-2.0
// The Accelerator as users meet it: real worker processes under the real `accel launch`, a
// world of one without a launcher, MPI's variables, and a rank dying mid-collective.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <regex>

#include "lib/common/error.h"
#include "runtime/state/accelerator.h"
#include "runtime/state/distributed_env.h"
#include "tests/support/process.h"

using namespace accel;
using accel::test::accelBinary;
using accel::test::BackgroundProcess;
using accel::test::contains;
using accel::test::run;
using accel::test::runtimeWorker;
using accel::test::TempDir;

namespace {

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const char* kHelpers[] = {"ranks",
                          "roles",
                          "device",
                          "device_process_group",
                          "main_process_first",
                          "gather",
                          "split_between_processes",
                          "gather_for_metrics",
                          "reduce",
                          "broadcast",
                          "pad_across_processes",
                          "set_seed",
                          "set_seed per process"};

std::map<std::string, std::string> hermetic(const TempDir& dir) {
  return accel::test::hermeticEnv(dir, {{"GLOO_SOCKET_IFNAME", "lo"}});
}

}  // namespace

TEST_CASE("accelerator: every helper under accel launch --cpu --num_processes 3", "[accelerator]") {
  TempDir dir;
  auto r = run({accelBinary(), "launch", "--cpu", "--num_processes", "3", "--main_process_port", "0", runtimeWorker(),
                "helpers", dir.file("shared.txt")},
               {}, hermetic(dir), 120000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.out, "FAIL"));
  for (int rank = 0; rank < 3; ++rank) {
    for (const char* helper : kHelpers) {
      INFO("rank " << rank << " helper " << helper);
      CHECK(contains(r.out, "[rank " + std::to_string(rank) + "] ok " + helper + "\n"));
    }
  }
  CHECK(occurrences(r.out, "printed by the main process only") == 1);
  CHECK(contains(r.out, "[rank 0] printed by the main process only"));
}

TEST_CASE("accelerator: a world of one without any launcher", "[accelerator]") {
  TempDir dir;
  auto env = hermetic(dir);
  for (const char* unset : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
    env[unset] = "";
  auto r = run({runtimeWorker(), "helpers", dir.file("shared.txt")}, {}, env, 60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "ok gather\n"));
  CHECK(contains(r.out, "ok set_seed per process\n"));
}

TEST_CASE("distributed env: the launcher's variables, MPI's, and inconsistent ones", "[accelerator]") {
  auto from = [](std::map<std::string, std::string> vars) {
    return readDistributedEnv([vars](const char* name) -> std::optional<std::string> {
      auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
  };
  auto launched = from({{"RANK", "3"},
                        {"WORLD_SIZE", "4"},
                        {"LOCAL_RANK", "1"},
                        {"LOCAL_WORLD_SIZE", "2"},
                        {"MASTER_ADDR", "10.0.0.1"},
                        {"MASTER_PORT", "29511"},
                        {"ACCEL_STORE_TOKEN", "t"},
                        {"ACCELERATE_MIXED_PRECISION", "bf16"},
                        {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "4"},
                        {"ACCELERATE_USE_CPU", "True"}});
  CHECK(launched.rank == 3);
  CHECK(launched.local_rank == 1);
  CHECK(launched.master_addr == "10.0.0.1");
  CHECK(launched.master_port == 29511);
  CHECK(launched.token == "t");
  CHECK(launched.mixed_precision == "bf16");
  CHECK(launched.gradient_accumulation_steps == 4);
  CHECK(launched.use_cpu);
  CHECK(launched.source == "accel launch / torchrun");
  auto mpi = from({{"OMPI_COMM_WORLD_RANK", "2"},
                   {"OMPI_COMM_WORLD_SIZE", "8"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  CHECK(mpi.rank == 2);
  CHECK(mpi.world_size == 8);
  CHECK(mpi.local_world_size == 4);
  CHECK(mpi.source == "Open MPI");
  auto pmi = from({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  CHECK(pmi.rank == 1);
  CHECK(from({}).source == "single process");
  CHECK_THROWS_WITH(from({{"RANK", "4"}, {"WORLD_SIZE", "4"}}), Catch::Contains("rank 4 is outside a world of 4"));
  CHECK_THROWS_WITH(from({{"RANK", "x"}, {"WORLD_SIZE", "4"}}), Catch::Contains("RANK='x' is not an integer"));
  // Past an int: out of range, never narrowed to some other rank.
  CHECK_THROWS_WITH(from({{"RANK", "4294967297"}, {"WORLD_SIZE", "4"}}),
                    Catch::Contains("RANK='4294967297' is out of range: it must be from 0 to 2147483647"));
}

TEST_CASE("accelerator: a rank that dies mid-collective is named by the others", "[accelerator][failure]") {
  TempDir dir;
  const std::string port = std::to_string(accel::test::freeLoopbackPort());
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 3; ++r) {
    auto env = hermetic(dir);
    env.insert({{"RANK", std::to_string(r)},
                {"WORLD_SIZE", "3"},
                {"LOCAL_RANK", std::to_string(r)},
                {"LOCAL_WORLD_SIZE", "3"},
                {"MASTER_ADDR", "127.0.0.1"},
                {"MASTER_PORT", port},
                {"ACCEL_STORE_TOKEN", "die-test"}});
    ranks.push_back(std::make_unique<BackgroundProcess>(std::vector<std::string>{runtimeWorker(), "die", "1"}, env));
  }
  auto r0 = ranks[0]->wait(120000), r1 = ranks[1]->wait(120000), r2 = ranks[2]->wait(120000);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r0.err << "\n---\n" << r2.err);
  CHECK(r1.exit_code == 9);
  CHECK(r0.exit_code == 3);
  CHECK(r2.exit_code == 3);
  CHECK(std::regex_search(r0.err,
                          std::regex("error: all_reduce \\(f32 x 1048576\\) sum failed on rank 0 of 3: .*rank 1")));
  CHECK(std::regex_search(r2.err, std::regex("failed on rank 2 of 3: .*rank 1")));
  CHECK(seconds < 30);  // half the workers' 60 s collective timeout: an error, not a hang
}

TEST_CASE("accelerator: the RNG state round-trips through bytes (checkpoints)", "[accelerator][checkpoint]") {
  accel::Accelerator acc;  // no launcher variables under ctest: a world of one
  acc.setSeed(42);
  acc.rng()();
  const auto state = acc.rngState();
  const auto next = acc.rng()();
  acc.rng()();
  acc.loadRngState(state);
  CHECK(acc.rng()() == next);
  CHECK_THROWS_WITH(acc.loadRngState({'n', 'o'}), Catch::Contains("is not a std::mt19937_64 state"));
  CHECK(acc.rng()() != next);  // a refused state changes nothing: the sequence went on
}
