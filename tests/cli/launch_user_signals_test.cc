// SPDX-License-Identifier: Apache-2.0
// SIGUSR1 and SIGUSR2 (lib/common/process/signal_channel.h): sent to the launcher, they reach every
// worker's own process, whose handler runs (SLURM's warning before a time limit, turned into a
// last checkpoint), and the job goes on; a worker's child without a handler is not signalled.
// Before any worker runs they are dropped, not fatal. torchrun's --signals_to_handle is accepted
// and changes none of it. Real launcher, real shells as workers, synchronised by the files and
// lines they write.
#include <catch2/catch.hpp>

#include <signal.h>

#include <sys/stat.h>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

std::vector<std::string> signalsCommand(const std::vector<std::string>& flags, const std::string& script) {
  std::vector<std::string> argv = {
      accelBinary(), "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0", "--grace_period", "30"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--no_python", "sh", "-c", script});
  return argv;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool filesOfEveryRank(const TempDir& dir, const std::string& name) {
  return waitUntil([&] { return exists(dir.file(name + ".0")) && exists(dir.file(name + ".1")); });
}

// A worker with a handler for SIGUSR1 (a checkpoint file) and one for SIGUSR2 (ends it), and a
// child without one (`sleep`, default disposition: a signal to the group would kill it). At the
// end the worker ends the child itself: "child 143" says it lived until then.
std::string checkpointWorker(const TempDir& dir) {
  return "d=" + dir.path() +
         "; sleep 60 & c=$!"
         "; trap 'echo checkpoint of rank $RANK > $d/usr1.$RANK' USR1"
         "; trap 'echo rank $RANK > $d/usr2.$RANK; n=2' USR2"
         "; echo ready; while [ \"$n\" != 2 ]; do wait $c; done"
         "; kill $c; wait $c; echo child $?";
}

}  // namespace

TEST_CASE("user signals: SIGUSR1 and SIGUSR2 reach every worker's handler, the launcher runs on", "[launch][signals]") {
  TempDir dir;
  BackgroundProcess launcher(signalsCommand({}, checkpointWorker(dir)), hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] ready", 2));
  launcher.signal(SIGUSR1);
  REQUIRE(filesOfEveryRank(dir, "usr1"));
  CHECK(slurp(dir.file("usr1.1")) == "checkpoint of rank 1\n");
  CHECK(processAlive(launcher.pid()));
  CHECK_FALSE(exists(dir.file("usr2.0")));
  launcher.signal(SIGUSR2);
  auto r = launcher.wait(60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "accel: received SIGUSR1: forwarding it to every worker"));
  CHECK(contains(r.err, "accel: received SIGUSR2: forwarding it to every worker"));
  CHECK(contains(r.out, "[rank 0] child 143"));  // not 138: SIGUSR1 went to the worker, not its group
  CHECK(contains(r.out, "[rank 1] child 143"));
  CHECK(exists(dir.file("usr2.1")));
}

TEST_CASE("user signals: --signals_to_handle listing SIGUSR1 changes nothing, an unlisted SIGTERM still stops",
          "[launch][signals]") {
  TempDir dir;
  BackgroundProcess launcher(signalsCommand({"--signals-to-handle", "SIGUSR1"},
                                            "echo listed $TORCHELASTIC_SIGNALS_TO_HANDLE; " + checkpointWorker(dir)),
                             hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] ready", 2));
  launcher.signal(SIGUSR1);
  REQUIRE(filesOfEveryRank(dir, "usr1"));
  launcher.signal(SIGTERM);
  auto r = launcher.wait(60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 143);
  CHECK(contains(r.out, "[rank 0] listed SIGUSR1"));
  CHECK(contains(r.err, "accel: received SIGTERM: forwarding it to every worker"));
}

TEST_CASE("user signals: a --signals_to_handle name accel does not handle is a usage error before any worker",
          "[launch][signals]") {
  TempDir dir;
  auto r = run(signalsCommand({"--signals_to_handle", "SIGTERM,SIGKILL"}, "touch " + dir.file("started")), {},
               hermeticEnv(dir));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--signals_to_handle: 'SIGKILL' is not a signal accel launch handles"));
  CHECK(contains(r.err, "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2"));
  CHECK_FALSE(exists(dir.file("started")));
}

// Machine 0 of two waits for machine 1 before it starts a worker: a SIGUSR1 then is dropped.
TEST_CASE("user signals: SIGUSR1 before any worker started does not end the launcher", "[launch][signals]") {
  TempDir dir;
  const std::string port = std::to_string(freeLoopbackPort()), job_port = std::to_string(freeLoopbackPort());
  auto machine = [&](const std::string& rank) {
    return std::vector<std::string>{
        accelBinary(), "launch",          "--cpu",  "--num_machines",    "2",         "--machine_rank",
        rank,          "--num_processes", "4",      "--main_process_ip", "127.0.0.1", "--main_process_port",
        port,          "--job_port",      job_port, "--no_python",       "sh",        "-c",
        "echo done"};
  };
  BackgroundProcess m0(machine("0"), hermeticEnv(dir));
  REQUIRE(waitUntil([&] { return (procSignals(m0.pid(), "SigBlk") & signalBit(SIGUSR1)) != 0; }));
  m0.signal(SIGUSR1);
  REQUIRE(waitUntil([&] { return (procSignals(m0.pid(), "ShdPnd") & signalBit(SIGUSR1)) == 0; }));  // read
  BackgroundProcess m1(machine("1"), hermeticEnv(dir));
  auto r0 = m0.wait(60000);
  auto r1 = m1.wait(60000);
  INFO(r0.out << r0.err << r1.err);
  CHECK(r0.exit_code == 0);
  CHECK(r1.exit_code == 0);
  CHECK(contains(r0.out, "rank 1] done"));  // "[host:rank 1]"
}
