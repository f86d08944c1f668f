// SPDX-License-Identifier: Apache-2.0
// Stragglers named while the job runs (docs/diagnose.md): 4 runtime_worker ranks on this machine,
// one of them 60 ms late to each all_reduce, is named once while it runs and in the job's
// summary with every rank's lateness; a healthy job names nobody; --straggler_window 0 turns the
// watch off, and a bad share is a usage error. Several machines, with their clocks aligned over
// the job channel: tests/cluster/diagnosis_cases.sh stragglers_2x2. Under --virtual_local_rank
// (LOCAL_RANK 0 everywhere) each rank still has its own ring (launch_env.h kLocalSlot).
#include <catch2/catch.hpp>

#include <regex>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

RunResult slowJob(const TempDir& dir, const std::string& slow, const std::string& steps,
                  std::vector<std::string> flags = {}) {
  std::vector<std::string> argv = {accelBinary(),         "launch", "--cpu", "--num_processes", "4",
                                   "--main_process_port", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {runtimeWorker(), "slow-rank", slow, "60", steps});
  return run(argv, {}, hermeticEnv(dir), 90000);
}

}  // namespace

TEST_CASE("stragglers: a rank late to every collective is named while the job runs, and in its summary",
          "[flight][scenario]") {
  TempDir dir;
  auto job = slowJob(dir, "0", "90");
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK(occurrences(job.out, "] done") == 4);
  CHECK(std::regex_search(job.err, std::regex(R"(accel: straggler: rank 0 \(host \S+, pid \d+\) came last to \d+ of )"
                                              R"(the last 50 collectives, 6\d\.\d ms after the rank before it)")));
  CHECK(occurrences(job.err, "accel: straggler: ") == 1);  // said once, by rank 0 only
  CHECK(contains(job.err, "accel: the job's straggler: rank 0 (host "));
  CHECK(contains(job.err, "accel: lateness after the first rank to arrive, per rank"));
  CHECK(std::regex_search(job.err, std::regex(R"(accel:   rank 0 \(host \S+, pid \d+\): 6\d\.\d 6\d\.\d)")));
  CHECK(occurrences(job.err, "accel:   rank ") == 4);
}

TEST_CASE("stragglers: with --virtual_local_rank (every LOCAL_RANK 0) each rank still records in a ring of its own",
          "[flight][scenario]") {
  TempDir dir;
  auto job = slowJob(dir, "3", "90", {"--virtual_local_rank"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK(contains(job.err, "accel: straggler: rank 3 (host "));
  CHECK(occurrences(job.err, "accel: straggler: ") == 1);
}

TEST_CASE("stragglers: a healthy job names nobody, the watch can be off, and a bad share is refused",
          "[flight][scenario]") {
  TempDir dir;
  auto healthy = slowJob(dir, "-1", "150");
  INFO(healthy.out << healthy.err);
  CHECK(healthy.exit_code == 0);
  CHECK_FALSE(contains(healthy.err, "straggler: "));
  auto off = slowJob(dir, "2", "70", {"--straggler_window", "0"});
  INFO(off.out << off.err);
  CHECK(off.exit_code == 0);
  CHECK_FALSE(contains(off.err, "straggler: "));
  auto bad = slowJob(dir, "2", "1", {"--straggler_share", "1.5"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--straggler_share 1.5 is not a share above 0 and at most 1"));
}
