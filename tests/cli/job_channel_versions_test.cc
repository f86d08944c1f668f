// SPDX-License-Identifier: Apache-2.0
// The job channel's versions and stopped launchers (lib/launch/job/job_messages.h,
// own_absence.h): a launcher of another protocol version ends the join with exit 2 naming both
// versions, on either side; a launcher stopped longer than the heartbeat timeout says that it
// was itself stopped, and gets the job's verdict. Real launchers, real sockets on 127.0.0.1.
#include <catch2/catch.hpp>

#include <signal.h>

#include <thread>

#include "lib/launch/job/job_messages.h"
#include "tests/cli/job_channel_support.h"
#include "tests/support/process.h"

using namespace accel::test;
using namespace accel::test::job_channel;

TEST_CASE("job channel: a launcher of another protocol version ends the join with exit 2, naming both",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  SECTION("at machine 0") {
    Job job;
    job.machines = 3;
    BackgroundProcess m0(machine(job, 0, dir), hermeticEnv(dir));
    BackgroundProcess m1(machine(job, 1, dir), hermeticEnv(dir));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    int fd = connectLoopback(job.job_port);
    sendText(fd, join(99, 2, kToken));
    auto said = closedWithin(fd, 10000);
    ::close(fd);
    auto r0 = m0.wait(30000), r1 = m1.wait(30000);
    INFO(r0.err << "\n---\n" << r1.err);
    REQUIRE(said);
    CHECK(contains(*said, "\"t\":\"refuse\""));
    for (const auto& r : {r0, r1}) {
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "a launcher on intruder (127.0.0.1) speaks the job protocol of version 99, machine 0 ("));
      CHECK(contains(r.err, ") speaks version " + std::to_string(accel::launch::job::kProtocolVersion)));
      CHECK(contains(r.err, "install the same accel on every machine"));
    }
  }
  SECTION("at machine 1: machine 0 answers in another version") {
    for (const std::string answer : {"{\"t\":\"start\",\"v\":99,\"port\":1234}", "{\"t\":\"start\",\"port\":1234}"}) {
      Job job;
      std::string error;
      int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int one = 1;
      ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(job.job_port));
      REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
      REQUIRE(::listen(listener, 4) == 0);
      BackgroundProcess m1(machine(job, 1, dir), hermeticEnv(dir));
      pollfd pl{listener, POLLIN, 0};
      REQUIRE(::poll(&pl, 1, 30000) == 1);
      int fd = ::accept(listener, nullptr, nullptr);
      sendText(fd, answer + "\n");
      auto r1 = m1.wait(30000);
      ::close(fd);
      ::close(listener);
      INFO(r1.err);
      CHECK(r1.exit_code == 2);
      const std::string version = contains(answer, "99") ? "99" : "1";
      CHECK(contains(r1.err, "machine 0's launcher (127.0.0.1:" + std::to_string(job.job_port) +
                                 ") speaks the job protocol of version " + version + ", this one ("));
    }
  }
}

TEST_CASE("job channel: a launcher stopped longer than the heartbeat timeout says it was stopped itself",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  Job job;
  const std::vector<std::string> quick = {"--heartbeat_timeout", "1"};
  BackgroundProcess m0(machine(job, 0, dir, quick), hermeticEnv(dir));
  BackgroundProcess m1(machine(job, 1, dir, quick), hermeticEnv(dir));
  REQUIRE(m0.waitForOutput("waiting", 1, 60000));
  REQUIRE(m1.waitForOutput("waiting", 1, 60000));
  m1.signal(SIGSTOP);
  auto r0 = m0.wait(30000);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  m1.signal(SIGCONT);
  auto r1 = m1.wait(30000);
  INFO(r0.err << "\n---\n" << r1.err);
  CHECK(r0.exit_code == 1);
  CHECK(contains(r0.err, "was lost: no word from its launcher for 1 s"));
  CHECK(r1.exit_code == 1);
  CHECK(contains(r1.err, "error: machine 1 ("));  // machine 0's verdict reached it
  CHECK(contains(r1.err, "this launcher (machine 1) was itself not running for "));
  CHECK_FALSE(contains(r1.err, "machine 0 (127.0.0.1:" + std::to_string(job.job_port) + ") was lost"));
}
