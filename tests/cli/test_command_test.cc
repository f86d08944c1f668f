// SPDX-License-Identifier: Apache-2.0
// `accel test` runs the preflight with the config's layout through the real launcher and real
// worker processes: every check passes on 2 CPU processes and prints its figures; a rank whose
// all_reduce result is altered (ACCEL_PREFLIGHT_CORRUPT) fails that check naming the rank; an
// invalid or missing config is exit 2 before any worker starts. Accelerate's own test script is
// skipped here (Debian's python3 has no Accelerate) and run by tests/peers/check_accel_test.py;
// stand-in scripts show how its end is judged (a rank's abort fails it, the interpreter's
// finalization is not run).
#include <filesystem>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::run;
using accel::test::RunResult;
using accel::test::TempDir;

namespace {

std::string cpuConfig(const TempDir& dir, const std::string& processes) {
  return dir.write("cpu.yaml", fmt::format("compute_environment: LOCAL_MACHINE\n"
                                           "distributed_type: MULTI_CPU\n"
                                           "main_process_port: {}\n"
                                           "mixed_precision: 'no'\n"
                                           "num_machines: 1\n"
                                           "num_processes: {}\n"
                                           "use_cpu: true\n",
                                           accel::test::freeLoopbackPort(), processes));
}

RunResult accelTest(const TempDir& dir, const std::string& config, std::map<std::string, std::string> env = {}) {
  env.emplace("PATH", "/usr/bin:/bin");
  return run({accelBinary(), "test", "--config_file", config}, {}, accel::test::hermeticEnv(dir, env), 120000);
}

// An `accelerate` package for /usr/bin/python3 whose test script is `script`: what `accel test`
// does with the script's end, without the peers' Accelerate (tests/peers/check_accel_test.py runs
// the real one).
std::map<std::string, std::string> fakeAccelerate(const TempDir& dir, const std::string& script) {
  dir.write("py/accelerate/__init__.py", "");
  dir.write("py/accelerate/test_utils/scripts/test_script.py", script);
  return {{"PYTHONPATH", dir.file("py")}, {"ACCEL_PYTHON", "/usr/bin/python3"}};
}

}  // namespace

TEST_CASE("accel test: two CPU processes pass every check and print the figures", "[test_command]") {
  TempDir dir;
  auto r = accelTest(dir, cpuConfig(dir, "2"));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "accel test: preflight: accel launch --config_file"));
  for (const char* check :
       {"rendezvous", "store", "barrier", "all_reduce [shm]", "all_gather [shm]", "broadcast [shm]"}) {
    CHECK(contains(r.out, fmt::format("{:<24} pass", check)));
  }
  CHECK(contains(r.out, "2 ranks on 1 machine"));
  CHECK(contains(r.out, "7 dtypes x 3 sizes, bit for bit"));
  CHECK(contains(r.out, "figure   all_reduce of 16 MiB f32:"));
  CHECK(contains(r.out, "x a memory copy"));
  CHECK(contains(r.out, "peer-to-peer ["));  // skipped: no CUDA here, whether or not it was built with CUDA
  CHECK(contains(r.out, "preflight: all 6 checks passed"));
  CHECK(contains(r.out, "accelerate's test script: skipped: /usr/bin/python3 has no Accelerate"));
  CHECK(contains(r.out, "accel test: every check passed"));
}

TEST_CASE("accel test: a rank whose all_reduce result is wrong fails that check, named", "[test_command]") {
  TempDir dir;
  auto r = accelTest(dir, cpuConfig(dir, "2"), {{"ACCEL_PREFLIGHT_CORRUPT", "1"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "all_reduce [shm]         FAIL     rank 1: 1 of 1 f32 elements wrong"));
  CHECK(contains(r.out, "all_gather [shm]         pass"));
  CHECK(contains(r.out, "preflight: 1 of 6 checks FAILED"));
  CHECK(contains(r.out, "accel test: FAILED: preflight (exit 1)"));
}

TEST_CASE("accel test: an invalid or missing config is a usage error before any worker starts", "[test_command]") {
  TempDir dir;
  auto bad = accelTest(dir, cpuConfig(dir, "many"));
  INFO(bad.out << bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "cpu.yaml:6:"));
  CHECK_FALSE(contains(bad.out, "rendezvous"));
  auto missing = accelTest(dir, dir.file("nope.yaml"));
  INFO(missing.out << missing.err);
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "nope.yaml"));
  CHECK_FALSE(contains(missing.out, "accelerate's test script"));
}

TEST_CASE("accel test: Accelerate's script ends without the interpreter's finalization, where torch's Gloo aborts",
          "[test_command]") {
  // The abort that pytorch/pytorch#190489 describes happens while the interpreter finalizes, after
  // the script's last line; an exit handler that aborts stands in for it.
  TempDir dir;
  auto env = fakeAccelerate(dir,
                            "import atexit, os\n"
                            "print('Testing, testing. 1, 2, 3. rank', os.environ['RANK'], flush=True)\n"
                            "atexit.register(os.abort)\n");
  auto r = accelTest(dir, cpuConfig(dir, "2"), env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "accel test: accelerate's test script: accel launch --config_file"));
  CHECK(contains(r.out, "test_script_runner.py " + dir.file("py/accelerate/test_utils/scripts/test_script.py")));
  CHECK(contains(r.out, "Testing, testing. 1, 2, 3. rank 1"));
  CHECK(contains(r.out, "accel test: every check passed"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK(entry.path().filename().string().rfind("accel-test-", 0) != 0);  // the runner's folder is gone
  }
}

TEST_CASE("accel test: a rank of Accelerate's script that dies or fails is the verdict, named with its status",
          "[test_command]") {
  TempDir dir;
  auto aborted =
      accelTest(dir, cpuConfig(dir, "2"),
                fakeAccelerate(dir, "import os, time\nif os.environ['RANK'] == '1': os.abort()\ntime.sleep(30)\n"));
  INFO(aborted.out << aborted.err);
  CHECK(aborted.exit_code == 1);
  CHECK(contains(aborted.err, "rank 1"));
  CHECK(contains(aborted.out, "accel test: FAILED: accelerate's test script (exit 134)"));
  auto failed = accelTest(dir, cpuConfig(dir, "2"), fakeAccelerate(dir, "import sys\nsys.exit('no good')\n"));
  INFO(failed.out << failed.err);
  CHECK(failed.exit_code == 1);
  CHECK(contains(failed.err, "no good"));
  CHECK(contains(failed.out, "accel test: FAILED: accelerate's test script (exit 1)"));
  // A script's own exit 2 is its failure, not the launcher refusing the command line.
  auto two = accelTest(dir, cpuConfig(dir, "2"), fakeAccelerate(dir, "import sys\nsys.exit(2)\n"));
  INFO(two.out << two.err);
  CHECK(two.exit_code == 1);
  CHECK(contains(two.out, "accel test: FAILED: accelerate's test script (exit 2)"));
}
