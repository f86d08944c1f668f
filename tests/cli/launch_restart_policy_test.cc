// SPDX-License-Identifier: Apache-2.0
// The restart policy (lib/launch/job/restart_policy.h) with real launchers: a hang restarts the
// round (--on_hang), start-up failures end the job early (--startup_timeout,
// --max_startup_failures). A machine whose workers keep failing first is asked to leave
// (--max_machine_failures): launch_elastic_test.cc. Real `accel` processes and workers.
#include <catch2/catch.hpp>

#include <memory>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

std::vector<std::string> solo(std::vector<std::string> extra, const std::string& script) {
  std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", "--num_processes", "1", "--grace_period", "2"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--no_python", "sh", "-c", script});
  return argv;
}

}  // namespace

TEST_CASE("restart policy: a hang restarts the round with its stacks read, or ends the job with --on_hang end",
          "[launch][failure][policy]") {
  TempDir dir;
  const std::string script =
      "echo \"round $TORCHELASTIC_RESTART_COUNT\"; if [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then exec sleep 60; fi";
  auto restarted = run(solo({"--hang_timeout", "2", "--max_restarts", "1"}, script), {}, hermeticEnv(dir), 60000);
  INFO(restarted.err);
  CHECK(restarted.exit_code == 0);
  CHECK(contains(restarted.out, "round 1"));
  CHECK(contains(restarted.err, "where each rank was before the stop"));
  CHECK(contains(restarted.err, "no rank made progress for 2 s"));
  CHECK(contains(restarted.err, "restarting all workers (restart 1 of 1)"));
  CHECK(contains(restarted.err, "every worker finished, after 1 restart(s)"));
  auto ended = run(solo({"--hang_timeout", "2", "--max_restarts", "1", "--on_hang", "end"}, script), {},
                   hermeticEnv(dir), 60000);
  INFO(ended.err);
  CHECK(ended.exit_code == 1);
  CHECK_FALSE(contains(ended.out, "round 1"));
  CHECK(contains(ended.err, "error: no rank made progress for 2 s"));
  CHECK(contains(ended.err, "--on_hang end ends it"));
}

TEST_CASE("restart policy: start-up failures in a row end the job before --max_restarts is spent",
          "[launch][failure][policy]") {
  TempDir dir;
  const std::string script = "echo \"round $TORCHELASTIC_RESTART_COUNT\"; exit 3";
  auto early = run(solo({"--max_restarts", "10"}, script), {}, hermeticEnv(dir), 60000);
  INFO(early.err);
  CHECK(early.exit_code == 3);
  CHECK(occurrences(early.out, "round ") == 3);
  CHECK(occurrences(early.err, "restarting all workers") == 2);
  CHECK(contains(early.err, "error: 3 rounds in a row failed within 30 s of their start (--startup_timeout)"));
  CHECK(contains(early.err, "not restarting again (--max_startup_failures 3)"));
  auto off = run(solo({"--max_restarts", "4", "--startup_timeout", "0"}, script), {}, hermeticEnv(dir), 60000);
  INFO(off.err);
  CHECK(off.exit_code == 3);
  CHECK(occurrences(off.out, "round ") == 5);  // every restart spent: none counts as a start-up failure
  auto limit = run(solo({"--max_restarts", "4", "--max_startup_failures", "2"}, script), {}, hermeticEnv(dir), 60000);
  CHECK(occurrences(limit.out, "round ") == 2);
  auto bad = run(solo({"--on_hang", "retry"}, script), {}, hermeticEnv(dir), 60000);
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--on_hang"));
}

TEST_CASE("restart policy: a restarted round on GPUs waits until the last round's processes freed their GPU memory",
          "[launch][failure][policy][gpu]") {
  TempDir dir;
  const std::string listed = dir.path() + "/nvml-processes";
  // Round 0's worker is listed on GPU 0 for UNTIL (a driver that frees a dead process's memory
  // late), then fails; round 1 succeeds.
  auto job = [&](const std::string& until, const std::string& timeout, const std::string& device = "--gpu") {
    const std::string script = "if [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then echo \"0 $$ 1073741824 " + until +
                               "\" > " + listed + "; exit 3; fi; echo \"round 1 on $CUDA_VISIBLE_DEVICES\"";
    std::vector<std::string> argv = {accelBinary(), "launch"};
    if (device == "--cpu") argv.push_back(device);
    for (const std::string& a : {std::string("--num_processes"), std::string("1"), std::string("--max_restarts"),
                                 std::string("1"), std::string("--gpu_free_timeout"), timeout,
                                 std::string("--no_python"), std::string("sh"), std::string("-c"), script}) {
      argv.push_back(a);
    }
    return run(argv, {},
               hermeticEnv(dir, {{"ACCEL_NVML_LIBRARY", fakeNvmlLibrary()},
                                 {"FAKE_NVML_GPUS", "1"},
                                 {"FAKE_NVML_PROCESSES_FILE", listed}}),
               60000);
  };
  auto freed = job("$(($(date +%s) + 2))", "20");
  INFO(freed.err);
  CHECK(freed.exit_code == 0);
  CHECK(contains(freed.out, "round 1 on"));
  CHECK(contains(freed.err, "for round 0's processes to free their GPU memory (GPU 0: pid "));
  CHECK(contains(freed.err, "holds 1.0 GiB)"));
  auto kept = job("0", "1");
  INFO(kept.err);
  CHECK(kept.exit_code == 0);
  CHECK(contains(kept.err,
                 "warning: round 0's processes still hold GPU memory after 1 s (--gpu_free_timeout): GPU "
                 "0: pid "));
  CHECK(contains(kept.err, "starting round 1 anyway"));
  // CPU workers and --gpu_free_timeout 0 do not look.
  for (const auto& off : {job("0", "0"), job("0", "20", "--cpu")}) {
    CHECK(off.exit_code == 0);
    CHECK_FALSE(contains(off.err, "GPU memory"));
  }
}

TEST_CASE("restart policy: restarts that save no newer checkpoint end the job after --max_no_progress_restarts",
          "[launch][failure][policy]") {
  TempDir dir;
  // Each round resumes from the latest checkpoint, trains to step 7 and fails: round 0 saves
  // step 5, the rounds after it save nothing newer.
  const std::string script = accelTrain() + " --steps 7 --log_every 0 --checkpoint_every 5 --checkpoint_dir " +
                             dir.path() + "/ck --resume >/dev/null; exit 3";
  auto capped = run(solo({"--max_restarts", "10", "--startup_timeout", "0"}, script), {}, hermeticEnv(dir), 120000);
  INFO(capped.err);
  CHECK(capped.exit_code == 3);
  CHECK(contains(capped.err, "restarting all workers (restart 3 of 10)"));
  CHECK_FALSE(contains(capped.err, "restart 4 of 10"));
  CHECK(contains(capped.err, "3 rounds in a row failed without saving a checkpoint beyond step 5"));
  CHECK(contains(capped.err, "(--max_no_progress_restarts 3)"));
  // 0: no limit; and a program that notes no checkpoint is not judged.
  auto unlimited = run(solo({"--max_restarts", "4", "--startup_timeout", "0", "--max_no_progress_restarts", "0"},
                            "rm -rf " + dir.path() + "/ck; " + script),
                       {}, hermeticEnv(dir), 120000);
  auto plain = run(solo({"--max_restarts", "4", "--startup_timeout", "0"}, "exit 3"), {}, hermeticEnv(dir), 60000);
  for (const auto* r : {&unlimited, &plain}) {
    INFO(r->err);
    CHECK(r->exit_code == 3);
    CHECK(contains(r->err, "restart 4 of 4"));
    CHECK_FALSE(contains(r->err, "without saving a checkpoint"));
  }
}
