// SPDX-License-Identifier: Apache-2.0
// Resume that every rank agrees on, and a checkpoint directory that one job owns:
// ranks shown different checkpoints fail together with one message; a second process is refused
// the directory at once, naming the holder, and gets it the moment the holder is SIGKILLed; a
// rank of the same run waits for an earlier round's holder instead; and
// the whole story with accel-train under the real launcher: job B started on job A's directory
// is refused within a second while A finishes unharmed, then B resumes to the same weights.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "lib/common/error.h"
#include "runtime/checkpoint/checkpoint.h"
#include "tests/runtime/gloo_ranks.h"
#include "tests/support/process.h"

using namespace accel;
using accel::test::BackgroundProcess;
using accel::test::run;
using accel::test::secondsSince;
using accel::test::slurp;
using accel::test::TempDir;

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The bound for a refusal, on a normal build; sanitizer runs (ACCEL_TEST_QUICK) start
// processes several times slower, so there the bound only tells a refusal from a hang.
double refusalLimit() { return std::getenv("ACCEL_TEST_QUICK") ? 10.0 : 1.0; }

CheckpointPart smallPart(int rank, int64_t step) {
  return {step, {{"params", std::vector<uint8_t>(64, static_cast<uint8_t>(rank + step))}}};
}

// Checkpoints of steps 3, 6 and 9 by 2 ranks in `dir` (6 and 9 kept).
void saveThree(const std::string& dir) {
  accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    for (int64_t step : {3, 6, 9}) saveCheckpoint(g, dir, smallPart(rank, step));
  });
}

std::vector<std::string> trainCommand(std::vector<std::string> args) {
  std::vector<std::string> argv = {
      accel::test::accelBinary(), "launch",      "-q", "--cpu", "--num_processes", "2", "--main_process_port", "0",
      accel::test::accelTrain(),  "--log_every", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

TEST_CASE("checkpoint agreement: ranks shown different checkpoints all fail with one message", "[checkpoint]") {
  TempDir a, b;
  saveThree(a.path());
  // Rank 1's machine is a step behind: its copy has no step-9 and its latest names step-6.
  fs::copy(a.path(), b.path(), fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  fs::remove_all(b.file("step-9"));
  b.write("latest", "step-6\n");
  auto behind =
      accel::test::onGlooRanks(2, [&](int rank, Backend& g) { loadCheckpoint(g, rank == 0 ? a.path() : b.path()); });
  CHECK(behind[0] == behind[1]);
  CHECK_THAT(behind[0], Catch::Contains("the ranks cannot all resume from the checkpoint rank 0 chose (" +
                                        a.file("step-9") + ", step 9)") &&
                            Catch::Contains("rank 1 on host") &&
                            Catch::Contains(b.file("step-9") + " does not exist here (its latest names step-6)"));
  // The same step name, other contents: rank 1's step-9 was written by another run.
  fs::copy(a.file("step-9"), b.file("step-9"), fs::copy_options::recursive);
  b.write("step-9/manifest", slurp(a.file("step-6/manifest")));
  auto other =
      accel::test::onGlooRanks(2, [&](int rank, Backend& g) { loadCheckpoint(g, rank == 0 ? a.path() : b.path()); });
  CHECK(other[0] == other[1]);
  CHECK_THAT(other[0], Catch::Contains("manifest differs from rank 0's (step 6 there, step 9 on rank 0)"));
  // Rank 0 has none but rank 1 has one: starting afresh would silently discard rank 1's.
  TempDir empty;
  auto lone = accel::test::onGlooRanks(
      2, [&](int rank, Backend& g) { resumeCheckpoint(g, rank == 0 ? empty.file("d") : a.path()); });
  CHECK(lone[0] == lone[1]);
  CHECK_THAT(lone[0],
             Catch::Contains("rank 0 found no checkpoint to resume from in " + empty.file("d") + ", but rank 1") &&
                 Catch::Contains("has a checkpoint (its latest names step-9)"));
  // Where they agree, every rank resumes from step 9; where none has one, nobody resumes.
  std::vector<int64_t> steps(2, -1);
  auto agreed = accel::test::onGlooRanks(
      2, [&](int rank, Backend& g) { steps[static_cast<size_t>(rank)] = loadCheckpoint(g, a.path()).step; });
  CHECK(agreed == std::vector<std::string>(2));
  CHECK(steps == std::vector<int64_t>{9, 9});
  std::vector<int> found(2, -1);
  accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    found[static_cast<size_t>(rank)] = resumeCheckpoint(g, empty.file("e")).has_value();
  });
  CHECK(found == std::vector<int>{0, 0});
}

TEST_CASE("checkpoint lock: a second process is refused at once, and gets the directory when the holder is SIGKILLed",
          "[checkpoint][failure]") {
  TempDir dir;
  std::map<std::string, std::string> env = {{"RANK", ""}, {"WORLD_SIZE", ""}, {"ACCEL_RUN_ID", "job-a"}};
  BackgroundProcess holder({accel::test::runtimeWorker(), "save-loop", dir.path()}, env);
  REQUIRE(holder.waitForOutput("saved 2"));
  const auto start = Clock::now();
  auto refused = run({accel::test::runtimeWorker(), "check", dir.path()}, {}, {{"RANK", ""}, {"WORLD_SIZE", ""}});
  const double took = secondsSince(start);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 3);
  CHECK_THAT(refused.err,
             Catch::Contains("checkpoint directory " + dir.path() + " is in use by another job: run job-a, pid " +
                             std::to_string(holder.pid())) &&
                 Catch::Contains("lock file " + dir.file(".accel-lock")));
  CHECK(took < refusalLimit());
  holder.signal(SIGKILL);
  holder.wait();
  auto after = run({accel::test::runtimeWorker(), "check", dir.path()}, {}, {{"RANK", ""}, {"WORLD_SIZE", ""}});
  INFO(after.out << after.err);
  CHECK(after.exit_code == 0);
}

TEST_CASE("checkpoint lock: a rank of the same run waits for an earlier round's holder instead of being refused",
          "[checkpoint][failure]") {
  TempDir dir;
  std::map<std::string, std::string> env = {{"RANK", ""}, {"WORLD_SIZE", ""}, {"ACCEL_RUN_ID", "job-a"}};
  BackgroundProcess holder({accel::test::runtimeWorker(), "save-loop", dir.path()}, env);
  REQUIRE(holder.waitForOutput("saved 2"));
  BackgroundProcess next({accel::test::runtimeWorker(), "check", dir.path()}, env);  // the next round's rank
  ::poll(nullptr, 0, 1500);
  CHECK(accel::test::processAlive(next.pid()));  // still waiting: not refused
  holder.signal(SIGKILL);
  holder.wait();
  auto got = next.wait(30000);
  INFO(got.out << got.err);
  CHECK(got.exit_code == 0);
  CHECK_FALSE(accel::test::contains(got.err, "in use by another job"));
}

TEST_CASE("checkpoint lock: job B on job A's directory is refused within a second, A is unharmed, B then resumes",
          "[checkpoint][train]") {
  TempDir dir;
  const std::vector<std::string> job = {"--steps", "400", "--hidden", "256", "--checkpoint_every", "3"};
  auto with = [&job](std::vector<std::string> more) {
    more.insert(more.begin(), job.begin(), job.end());
    return more;
  };
  auto whole = run(trainCommand(with({"--save_weights", dir.file("whole")})), {}, accel::test::trainerEnv(dir), 300000);
  REQUIRE(whole.exit_code == 0);
  const std::string ckpt = dir.file("ckpt");
  BackgroundProcess a(trainCommand(with({"--checkpoint_dir", ckpt, "--save_weights", dir.file("a")})),
                      accel::test::trainerEnv(dir));
  REQUIRE(a.waitForOutput("checkpoint saved at step 3"));
  const auto start = Clock::now();
  auto b = run(trainCommand(with({"--checkpoint_dir", ckpt, "--resume", "--save_weights", dir.file("b")})), {},
               accel::test::trainerEnv(dir), 60000);
  const double took = secondsSince(start);
  INFO("B: " << b.out << b.err);
  CHECK(b.exit_code == 1);
  CHECK_THAT(b.err, Catch::Contains("checkpoint directory " + ckpt + " is in use by another job: run ") &&
                        Catch::Contains("give this job another checkpoint directory"));
  WARN("job B was refused after " << took << " s (launch included)");
  CHECK(took < refusalLimit());
  auto finished = a.wait(300000);
  INFO("A: " << finished.out << finished.err);
  REQUIRE(finished.exit_code == 0);
  CHECK(slurp(dir.file("a")) == slurp(dir.file("whole")));  // A never noticed B
  auto again = run(trainCommand(with({"--checkpoint_dir", ckpt, "--resume", "--save_weights", dir.file("b")})), {},
                   accel::test::trainerEnv(dir), 300000);
  INFO("B again: " << again.out << again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("resumed from step 399") != std::string::npos);
  CHECK(slurp(dir.file("b")) == slurp(dir.file("whole")));
}
