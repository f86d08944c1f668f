// SPDX-License-Identifier: Apache-2.0
// Ranks that call different collectives (issue 16): one extra all_reduce, one with another
// element count, one with another dtype. Three real worker processes (started by hand, so that
// no launcher stops the others once one has failed: each must find out by itself), over shared
// memory and over Gloo (ACCEL_SHM=0): every rank must fail within 10 s although its collective
// timeout is 5 minutes, with one message naming every rank and its call.
#include <catch2/catch.hpp>

#include <memory>
#include <regex>

#include "tests/support/process.h"

using accel::test::BackgroundProcess;
using accel::test::TempDir;

TEST_CASE("mismatched collectives: every rank fails within seconds, naming each rank's call", "[failure][comm]") {
  const std::string how = GENERATE("extra", "count", "dtype");
  const std::string shm = GENERATE("1", "0");
  TempDir dir;
  const std::string port = std::to_string(accel::test::freeLoopbackPort());
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  for (int r = 0; r < 3; ++r) {
    auto env = accel::test::hermeticEnv(dir, {{"RANK", std::to_string(r)}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", std::to_string(r)},
                                              {"LOCAL_WORLD_SIZE", "3"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port},
                                              {"ACCEL_STORE_TOKEN", "mismatch-test"}, {"ACCEL_SHM", shm},
                                              {"GLOO_SOCKET_IFNAME", "lo"}, {"ACCEL_COLLECTIVE_TIMEOUT", "300"}});
    ranks.push_back(std::make_unique<BackgroundProcess>(std::vector<std::string>{accel::test::runtimeWorker(), "mismatch", how}, env));
  }
  const std::string expected = how == "extra"   ? "ranks 0,1 called #5 barrier; rank 2 called #5 all_reduce (f32 x 1000) sum"
                               : how == "count" ? "ranks 0,1 called #4 all_reduce (f32 x 1000) sum; rank 2 called #4 all_reduce (f32 x 1001) sum"
                                                : "ranks 0,1 called #4 all_reduce (f32 x 1000) sum; rank 2 called #4 all_reduce (f64 x 1000) sum";
  const std::regex line(R"(error after ([0-9.e-]+) s: .*ranks called different collectives: ([^\n]*))");
  for (int r = 0; r < 3; ++r) {
    auto res = ranks[static_cast<size_t>(r)]->wait(60000);
    INFO(how << " over " << (shm == "1" ? "shared memory" : "Gloo") << ", rank " << r << ":\n" << res.out << res.err);
    CHECK(res.exit_code == 3);
    std::smatch m;
    REQUIRE(std::regex_search(res.err, m, line));
    CHECK(std::stod(m[1]) < 10.0);
    CHECK(m[2].str().rfind(expected, 0) == 0);
  }
}
