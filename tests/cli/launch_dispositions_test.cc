// SPDX-License-Identifier: Apache-2.0
// The signal dispositions a launcher inherits (lib/common/process/signal_channel.h): a shell starts a
// background command with SIGINT and SIGQUIT ignored, yet Ctrl-C's SIGINT sent to the launcher
// still stops the job at once, the workers having started with the default disposition; nohup
// ignores SIGHUP, and a hangup then neither stops the launcher nor reaches the workers; an
// ignored SIGUSR1 is kept the same way. Real launcher, real shells as workers.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> dispositionsCommand(const std::vector<std::string>& wrapper,
                                             const std::vector<std::string>& worker) {
  std::vector<std::string> argv = wrapper;
  const std::vector<std::string> launcher = {
      accelBinary(), "launch",         "--cpu", "--num_processes", "2", "--main_process_port",
      "0",           "--grace_period", "30",    "--no_python"};
  argv.insert(argv.end(), launcher.begin(), launcher.end());
  argv.insert(argv.end(), worker.begin(), worker.end());
  return argv;
}

std::vector<std::string> shellScript(const std::string& script) { return {"sh", "-c", script}; }

// The signals each worker ignores, from /proc: its "] pid N" lines in the launcher's output.
std::vector<unsigned long long> workersIgnore(const std::string& output) {
  std::vector<unsigned long long> sets;
  for (size_t at = 0; (at = output.find("] pid ", at)) != std::string::npos; ++at) {
    sets.push_back(procSignals(std::stoi(output.substr(at + 6, output.find('\n', at) - at - 6)), "SigIgn"));
  }
  return sets;
}

}  // namespace

TEST_CASE("dispositions: SIGINT ignored on entry (a shell's &) is still acted on, and workers get it by default",
          "[launch][signals][failure]") {
  TempDir dir;
  // `exec` keeps the ignore the shell set: the launcher starts as a background command would.
  const std::string sig = GENERATE("INT", "QUIT");
  BackgroundProcess launcher(
      dispositionsCommand({"sh", "-c", "trap '' " + sig + "; exec \"$@\"", "sh"}, {envWorker(), "--sleep", "60"}),
      hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("pgid ", 2));
  const auto ignores = workersIgnore(launcher.output());
  CHECK(ignores.size() == 2);
  for (auto set : ignores) CHECK((set & (signalBit(SIGINT) | signalBit(SIGQUIT))) == 0);
  const auto start = Clock::now();
  launcher.signal(sig == "INT" ? SIGINT : SIGQUIT);
  auto r = launcher.wait(60000);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  INFO(sig << ": " << r.err);
  CHECK(r.exit_code == 128 + (sig == "INT" ? SIGINT : SIGQUIT));
  CHECK(took < 5);  // not the 30 s grace period: the workers did not ignore it
  CHECK_FALSE(contains(r.err, "sending SIGKILL"));
}

TEST_CASE("dispositions: under nohup a hangup neither stops the launcher nor reaches the workers",
          "[launch][signals][failure]") {
  TempDir dir;
  BackgroundProcess launcher(dispositionsCommand({"nohup"}, shellScript("echo started; sleep 2; echo done")),
                             hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("started", 2));
  launcher.signal(SIGHUP);
  auto r = launcher.wait(60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "[rank 0] done"));
  CHECK(contains(r.out, "[rank 1] done"));
  CHECK_FALSE(contains(r.err, "SIGHUP"));
}

TEST_CASE("dispositions: without nohup a hangup stops the job, forwarded to the workers",
          "[launch][signals][failure]") {
  TempDir dir;
  BackgroundProcess launcher(dispositionsCommand({}, shellScript("echo started; sleep 60")), hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("started", 2));
  launcher.signal(SIGHUP);
  auto r = launcher.wait(60000);
  INFO(r.err);
  CHECK(r.exit_code == 128 + SIGHUP);
  CHECK(contains(r.err, "received SIGHUP: forwarding it to every worker"));
}

TEST_CASE("dispositions: SIGUSR1 ignored on entry stays ignored in the workers and is not forwarded",
          "[launch][signals]") {
  TempDir dir;
  BackgroundProcess launcher(
      dispositionsCommand(
          {"sh", "-c", "trap '' USR1; exec \"$@\"", "sh"},
          shellScript("sleep 60 & c=$!; trap 'kill $c; echo got USR2; exit 0' USR2; echo pid $$; wait $c")),
      hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] pid ", 2));
  const auto ignores = workersIgnore(launcher.output());
  CHECK(ignores.size() == 2);
  for (auto set : ignores) CHECK((set & (signalBit(SIGUSR1) | signalBit(SIGUSR2))) == signalBit(SIGUSR1));
  // Had SIGUSR1 been queued, the launcher would read it before the higher-numbered SIGUSR2.
  launcher.signal(SIGUSR1);
  launcher.signal(SIGUSR2);
  auto r = launcher.wait(60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "[rank 0] got USR2"));
  CHECK(contains(r.out, "[rank 1] got USR2"));
  CHECK(contains(r.err, "received SIGUSR2: forwarding it to every worker"));
  CHECK_FALSE(contains(r.err, "SIGUSR1"));
}
