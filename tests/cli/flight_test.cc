// SPDX-License-Identifier: Apache-2.0
// `accel fr` on the folder a stop left (docs/diagnose.md): a 4-rank job whose rank 3 never enters
// its sixth all_reduce, stopped by --hang_timeout with --log_dir; the folder gives the verdict
// naming rank 3 and a line per rank, as text and as JSON. Bad folders are usage errors naming
// what is wrong: no records, a damaged file, the records of two jobs. A running job is asked
// through its launcher in tests/cli/stacks_test.cc; several machines in the namespace cluster
// (diagnosis_cases.sh).
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "lib/common/atomic_file.h"
#include "tests/support/process.h"

using namespace accel::test;
namespace fs = std::filesystem;

TEST_CASE("fr: a stopped job's folder names the rank that never entered the call, and bad folders are refused",
          "[flight][stacks]") {
  TempDir dir;
  // No stack tools on the PATH: the stop reads the flight records and does not wait for gdb.
  auto job =
      run({accelBinary(), "launch", "--cpu", "--num_processes", "4", "--main_process_port", "0", "--hang_timeout", "2",
           "--grace_period", "2", "--log_dir", dir.file("logs"), runtimeWorker(), "spin", "3"},
          {}, hermeticEnv(dir, {{"PATH", "/nonexistent"}}), 90000);
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 1);
  std::smatch m;
  REQUIRE(std::regex_search(job.err, m, std::regex("records: (\\S+)\\)")));
  const fs::path records = m[1].str();
  const fs::path launch_dir = records.parent_path().parent_path();
  CHECK(contains(job.err, "all_reduce (f32 x 1000) sum #6 of group 0: ranks 0-2 entered it "));

  auto fr = run({accelBinary(), "fr", launch_dir.string()});
  INFO(fr.out << fr.err);
  CHECK(fr.exit_code == 0);
  CHECK(contains(fr.out, "accel fr: 4 rank(s), from " + launch_dir.string()));
  CHECK(std::regex_search(
      fr.out, std::regex(R"(rank 3 \(host \S+, pid \d+\) never did: its last was all_reduce \(f32 x 1000\) sum #5)")));
  CHECK(
      std::regex_search(fr.out, std::regex(R"(rank 3 \(host \S+, pid \d+\): 5 calls seen; completed #5 all_reduce)")));
  auto json = run({accelBinary(), "fr", (launch_dir / "attempt_0").string(), "--json"});
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j.at("stuck") == nlohmann::json::array({3}));
  CHECK(j.at("ranks").size() == 4);

  TempDir bad;
  fs::create_directories(bad.file("empty"));
  auto empty = run({accelBinary(), "fr", bad.file("empty")});
  CHECK(empty.exit_code == 2);
  CHECK(contains(empty.err, "accel: error: no flight records in " + bad.file("empty") + ": it holds no rank_N.json"));

  fs::create_directories(bad.file("damaged"));
  for (int rank = 0; rank < 4; ++rank) {
    fs::copy_file(records / ("rank_" + std::to_string(rank) + ".json"),
                  fs::path(bad.file("damaged")) / ("rank_" + std::to_string(rank) + ".json"));
  }
  accel::writeFileAtomic(bad.file("damaged") + "/rank_2.json", "{\"version\": \"accel-1\", \"rank\": ");
  auto damaged = run({accelBinary(), "fr", bad.file("damaged")});
  CHECK(damaged.exit_code == 2);
  CHECK(contains(damaged.err, "accel: error: " + bad.file("damaged") + "/rank_2.json: not a flight record: "));

  auto other = nlohmann::json::parse(accel::readFile((records / "rank_1.json").string()));
  other["run_id"] = "another-job";
  accel::writeFileAtomic(bad.file("damaged") + "/rank_2.json", other.dump());
  auto mixed = run({accelBinary(), "fr", bad.file("damaged")});
  CHECK(mixed.exit_code == 2);
  INFO(damaged.err << mixed.err);
  CHECK(contains(mixed.err, "holds the records of more than one job or round: run "));
  CHECK(contains(mixed.err, "; run another-job round 0 (ranks 1)"));
}
