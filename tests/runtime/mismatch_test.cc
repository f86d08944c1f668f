// SPDX-License-Identifier: Apache-2.0
// Ranks that call different collectives: one extra all_reduce, one with another
// element count, one with another dtype, all_to_all against all_to_all_v. Three real worker processes (started by hand,
// so that no launcher stops the others once one has failed: each must find out by itself), over shared memory and over
// Gloo (ACCEL_SHM=0): every rank must fail within 10 s although its collective timeout is 5 minutes, with one message
// naming every rank and its call.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <regex>

#include "tests/support/process.h"

using accel::test::BackgroundProcess;
using accel::test::TempDir;

namespace {

// Three ranks of `runtime_worker mismatch HOW`; checks that every one fails within `seconds`
// with the listing of every rank's call (and `also`, when given).
void expectEveryRankNames(const std::string& how, std::map<std::string, std::string> extra, double seconds,
                          const std::string& also = "") {
  TempDir dir;
  const std::string port = std::to_string(accel::test::freeLoopbackPort());
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  for (int r = 0; r < 3; ++r) {
    auto env = accel::test::rankEnv(r, 3, port, "mismatch-test", {{"ACCEL_COLLECTIVE_TIMEOUT", "300"}});
    env.insert(extra.begin(), extra.end());
    ranks.push_back(std::make_unique<BackgroundProcess>(
        std::vector<std::string>{accel::test::runtimeWorker(), "mismatch", how}, accel::test::hermeticEnv(dir, env)));
  }
  const std::string expected =
      how == "extra"        ? "ranks 0,1 called #5 barrier; rank 2 called #5 all_reduce (f32 x 1000) sum"
      : how == "all_to_all" ? "ranks 0,1 called #4 all_to_all (f32 x 999); rank 2 called #4 all_to_all_v (f32)"
      : how == "count"
          ? "ranks 0,1 called #4 all_reduce (f32 x 1000) sum; rank 2 called #4 all_reduce (f32 x 1001) sum"
          : "ranks 0,1 called #4 all_reduce (f32 x 1000) sum; rank 2 called #4 all_reduce (f64 x 1000) sum";
  const std::regex line(R"(error after ([0-9.e-]+) s: .*ranks called different collectives: ([^\n]*))");
  for (int r = 0; r < 3; ++r) {
    auto res = ranks[static_cast<size_t>(r)]->wait(60000);
    INFO(how << ", rank " << r << ":\n" << res.out << res.err);
    CHECK(res.exit_code == 3);
    std::smatch m;
    REQUIRE(std::regex_search(res.err, m, line));
    CHECK(std::stod(m[1]) < seconds);
    CHECK(m[2].str().rfind(expected, 0) == 0);
    CHECK(m[2].str().find(also) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("mismatched collectives: every rank fails within seconds, naming each rank's call", "[failure][comm]") {
  const std::string how = GENERATE("extra", "count", "dtype", "all_to_all");
  const std::string shm = GENERATE("1", "0");
  INFO("over " << (shm == "1" ? "shared memory" : "Gloo"));
  expectEveryRankNames(how, {{"ACCEL_SHM", shm}}, 10.0);
}

TEST_CASE("mismatched collectives under ACCEL_DEBUG=DETAIL: refused before they run", "[failure][comm]") {
  const std::string shm = GENERATE("1", "0");
  const std::string how = GENERATE("count", "all_to_all");
  INFO("over " << (shm == "1" ? "shared memory" : "Gloo") << ", " << how);
  // Gloo's own check waits a second before it looks: the DETAIL check does not wait at all.
  // (Sanitizer runs, ACCEL_TEST_QUICK, are several times slower: there it only must not hang.)
  const double limit = std::getenv("ACCEL_TEST_QUICK") ? 10.0 : 0.9;
  expectEveryRankNames(how, {{"ACCEL_SHM", shm}, {"ACCEL_DEBUG", "DETAIL"}}, limit,
                       "checked before it ran (ACCEL_DEBUG=DETAIL)");
}

TEST_CASE("mismatched collectives across emulated machines: named with the group's own numbers", "[failure][comm]") {
  // Ranks 0,1 on machine a, 2,3 on machine b (ACCEL_HOST_ID): shared memory inside each, Gloo
  // between the leaders. Rank 3 deviates inside machine b's step: the message gives the call's
  // number in the job's group (#4: three all_reduces came before it), names the step, and never
  // the step's own group size ("rank 3 of 2").
  TempDir dir;
  const std::string port = std::to_string(accel::test::freeLoopbackPort());
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  for (int r = 0; r < 4; ++r) {
    auto env = accel::test::rankEnv(r, 4, port, "mismatch-test",
                                    {{"ACCEL_COLLECTIVE_TIMEOUT", "300"}, {"ACCEL_HOST_ID", r < 2 ? "a" : "b"}}, 2);
    ranks.push_back(
        std::make_unique<BackgroundProcess>(std::vector<std::string>{accel::test::runtimeWorker(), "mismatch", "count"},
                                            accel::test::hermeticEnv(dir, env)));
  }
  for (int r = 0; r < 4; ++r) {
    auto res = ranks[static_cast<size_t>(r)]->wait(60000);
    INFO("rank " << r << ":\n" << res.err);
    CHECK(res.exit_code == 3);
    CHECK(res.err.find(" of 2") == std::string::npos);
    if (r >= 2) {
      CHECK(res.err.find("failed on rank " + std::to_string(r) +
                         " of 4: its step within its machine (ranks 2,3): ranks "
                         "called different collectives: rank 2 called #4 all_reduce (f32 x 1000) sum; rank 3 called #4 "
                         "all_reduce (f32 x 1001) sum") != std::string::npos);
    }
  }
}
