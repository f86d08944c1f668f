// SPDX-License-Identifier: Apache-2.0
// The job channel takes nothing on trust (lib/launch/job/hub_door.h, job_messages.h): strangers
// on machine 0's job port — typed-wrong lines, joins without the token, silent connections
// filling the door, a descriptor limit — are closed with a note and never end or change the
// job, which finishes with exit 0 and the weights of an undisturbed run; a launcher of another
// protocol version ends the job with exit 2 naming both versions; a launcher stopped longer
// than the heartbeat timeout says so itself. Real launchers, real accel-train, real sockets on
// 127.0.0.1.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "tests/cli/job_channel_support.h"
#include "tests/support/process.h"

using namespace accel::test;
using namespace accel::test::job_channel;

namespace {

// Whether the other side has closed by now (what it said before is skipped).
bool closedNow(int fd) {
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

double cpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoll(f);
    if (i == 15) stime = std::stoll(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The descriptor the process would get next: with its limit set to it, the next accept fails.
rlim_t lowestFreeDescriptor(pid_t pid) {
  std::set<long> used;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    used.insert(std::stol(e.path().filename().string()));
  }
  rlim_t fd = 0;
  while (used.count(static_cast<long>(fd))) ++fd;
  return fd;
}

// Strangers' lines, the other job's token and silence, one after the other on one running job,
// then machine 0's descriptors exhausted: each closed with a note, none ends or changes the job.
void strangersAndSilence(const Job& job) {
  int silent = connectLoopback(job.job_port);
  const auto start = Clock::now();
  const std::vector<std::string> lines = {
      "{\"t\":1}\n",
      "{\"t\":\"join\",\"machine\":\"x\"}\n",
      "{\"t\":\"join\",\"token\":5}\n",
      "{\"t\":\"failed\",\"failure\":{},\"replaces\":false}\n",
      "{\"t\":\"end\",\"code\":0}\n",
      "[1,2,3]\n",
      std::string(2000, '[') + "\n",
      std::string("\x00\xff\xfe garbage\n", sizeof "\x00\xff\xfe garbage\n" - 1),
      join(2, 1, "not-the-token"),
      join(2, 1, kToken),  // the right token, after the start: turned away, the job goes on
      "{\"t\":\"join\",\"v\":2,\"machine\":-4,\"host\":\"h\",\"pid\":1,\"machines\":2,\"world\":2,\"token\":\"" +
          kToken + "\"}\n",
      std::string(300 * 1024, 'x'),  // an endless line
  };
  for (const auto& line : lines) {
    INFO(line.substr(0, 80));
    int fd = connectLoopback(job.job_port);
    sendText(fd, line);
    auto said = closedWithin(fd, 3000);
    CHECK(said);
    if (said && contains(line, "not-the-token")) CHECK(contains(*said, "offered another job's token"));
    ::close(fd);
  }
  CHECK(closedWithin(silent, 10000));
  const double waited = secondsSince(start);
  CHECK(waited > 4.5);
  CHECK(waited < 7.5);
  ::close(silent);
}

// Machine 0's descriptor limit lowered to what it uses, 64 connections in its backlog: it must
// not spin (a fifth of a core at most over 2 s).
void exhaustDescriptors(const Job& job, pid_t m0) {
  const rlim_t in_use = lowestFreeDescriptor(m0);
  rlimit low{in_use, in_use}, old{};
  REQUIRE(::prlimit(m0, RLIMIT_NOFILE, nullptr, &old) == 0);
  low.rlim_max = old.rlim_max;
  REQUIRE(::prlimit(m0, RLIMIT_NOFILE, &low, nullptr) == 0);
  std::vector<int> flood;
  for (int i = 0; i < 64; ++i) flood.push_back(connectLoopback(job.job_port));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double cpu_before = cpuSeconds(m0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double cpu = cpuSeconds(m0) - cpu_before;
  INFO("machine 0's launcher used " << cpu << " s of CPU in 2 s, its descriptors limited to " << in_use);
  CHECK(cpu < 0.2);
  for (int fd : flood) ::close(fd);
  REQUIRE(::prlimit(m0, RLIMIT_NOFILE, &old, nullptr) == 0);
}

}  // namespace

TEST_CASE("job channel: strangers, silence and exhausted descriptors never end or change the job",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  Job job;
  auto p = startPair(job, dir);
  strangersAndSilence(job);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // notes come at most one a second
  exhaustDescriptors(job, p.m0->pid());
  finishesUnharmed(p, dir, "accel: job port: closed a connection from 127.0.0.1 that");
  CHECK(contains(p.m0->output(), "that sent no join within 5 s"));
  CHECK(contains(p.m0->output(), "cannot accept on the job port (too many open files): pausing 200 ms"));
}

TEST_CASE("job channel: silent connections filling the door do not keep machine 1 out",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  Job job;
  Pair p;
  p.m0 = std::make_unique<BackgroundProcess>(machine(job, 0, dir), hermeticEnv(dir));
  std::vector<int> silent;
  for (int i = 0; i < 200 && silent.empty(); ++i) {  // machine 0 starts listening
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(job.job_port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      silent.push_back(fd);
    } else {
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  REQUIRE(!silent.empty());
  while (silent.size() < 40) silent.push_back(connectLoopback(job.job_port));
  p.m1 = std::make_unique<BackgroundProcess>(machine(job, 1, dir), hermeticEnv(dir));
  while (silent.size() < 80) silent.push_back(connectLoopback(job.job_port));  // and a burst around its connect
  REQUIRE(p.m1->waitForOutput("waiting", 1, 30000));
  int closed = 0;
  for (int fd : silent) closed += closedNow(fd) ? 1 : 0;
  CHECK(closed >= 64);  // at most 16 wait at once
  for (int fd : silent) ::close(fd);
  finishesUnharmed(p, dir, "that connected while the door was full of connections that have not joined yet");
}
