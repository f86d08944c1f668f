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

#include "tests/support/process.h"

using namespace accel::test;

namespace {

using Clock = std::chrono::steady_clock;
const std::string kToken = "job-channel-test-token";

struct Job {
  int port = freeLoopbackPort();
  int job_port = freeLoopbackPort();
  int machines = 2;
};

// Each machine's worker waits for the file GO, then trains: the channel is attacked while the
// job runs, and the weights show whether anything of it reached the training.
std::vector<std::string> machine(const Job& job, int rank, const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", "--num_machines", std::to_string(job.machines),
                                   "--machine_rank", std::to_string(rank), "--num_processes",
                                   std::to_string(job.machines), "--main_process_ip", "127.0.0.1",
                                   "--main_process_port", std::to_string(job.port), "--job_port",
                                   std::to_string(job.job_port), "--rdzv_token", kToken, "--grace_period", "2"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string go = dir.file("GO");
  argv.insert(argv.end(), {"--no_python", "sh", "-c",
                           "echo waiting; while [ ! -e " + go + " ]; do sleep 0.02; done; exec " + accelTrain() +
                               " --steps 300 --log_every 0"});
  return argv;
}

std::string crcIn(const std::string& out) {
  auto at = out.find("weights crc32 ");
  return at == std::string::npos ? "" : out.substr(at + 14, 8);
}

// The weights of the same job, undisturbed.
const std::string& referenceCrc() {
  static const std::string crc = [] {
    TempDir dir;
    Job job;
    dir.write("GO", "");
    BackgroundProcess m0(machine(job, 0, dir), hermeticEnv(dir));
    auto m1 = run(machine(job, 1, dir), {}, hermeticEnv(dir), 120000);
    auto r0 = m0.wait(120000);
    REQUIRE(r0.exit_code == 0);
    return crcIn(r0.out);
  }();
  return crc;
}

int connectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

void sendText(int fd, const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    ssize_t n = ::send(fd, text.data() + at, text.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;  // closed by the other side: what some cases expect
    at += static_cast<size_t>(n);
  }
}

// Reads until the other side closes: what it said, or nullopt when it stays open `timeout_ms`.
std::optional<std::string> closedWithin(int fd, int timeout_ms) {
  std::string said;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return std::nullopt;
    char buffer[4096];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return said;
    said.append(buffer, static_cast<size_t>(n));
  }
}

// Whether the other side has closed by now (what it said before is skipped).
bool closedNow(int fd) {
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A running pair whose workers wait for GO.
struct Pair {
  std::unique_ptr<BackgroundProcess> m0, m1;
};
Pair startPair(const Job& job, const TempDir& dir) {
  Pair p{std::make_unique<BackgroundProcess>(machine(job, 0, dir), hermeticEnv(dir)),
         std::make_unique<BackgroundProcess>(machine(job, 1, dir), hermeticEnv(dir))};
  REQUIRE(p.m0->waitForOutput("waiting", 1, 60000));
  REQUIRE(p.m1->waitForOutput("waiting", 1, 60000));
  return p;
}

// GO, then both launchers end as the undisturbed job does, machine 0 having noted `note`.
void finishesUnharmed(Pair& p, const TempDir& dir, const std::string& note) {
  dir.write("GO", "");
  auto r0 = p.m0->wait(120000), r1 = p.m1->wait(120000);
  INFO(r0.err << "\n---\n" << r1.err);
  CHECK(r0.exit_code == 0);
  CHECK(r1.exit_code == 0);
  CHECK(crcIn(r0.out) == referenceCrc());
  CHECK(contains(r0.err, note));
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

std::string join(int version, int machine, const std::string& token) {
  return "{\"t\":\"join\",\"v\":" + std::to_string(version) + ",\"machine\":" + std::to_string(machine) +
         ",\"host\":\"intruder\",\"pid\":1,\"machines\":2,\"world\":2,\"token\":\"" + token + "\"}\n";
}

}  // namespace

TEST_CASE("job channel: strangers' lines are closed with a note and the job finishes unharmed",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  Job job;
  auto p = startPair(job, dir);
  const std::vector<std::string> lines = {
      "{\"t\":1}\n",
      "{\"t\":\"join\",\"machine\":\"x\"}\n",
      "{\"t\":\"join\",\"token\":5}\n",
      "{\"t\":\"failed\",\"failure\":{},\"replaces\":false}\n",
      "{\"t\":\"end\",\"code\":0}\n",
      "[1,2,3]\n",
      std::string(2000, '[') + "\n",
      std::string("\x00\xff\xfe garbage\n", 14),
      join(2, 1, "not-the-token"),
      join(2, 1, kToken),  // the right token, after the start: turned away, the job goes on
      "{\"t\":\"join\",\"v\":2,\"machine\":-4,\"host\":\"h\",\"pid\":1,\"machines\":2,\"world\":2,\"token\":\"" + kToken + "\"}\n",
      std::string(300 * 1024, 'x'),  // an endless line
  };
  for (const auto& line : lines) {
    INFO(line.substr(0, 80));
    int fd = connectLoopback(job.job_port);
    sendText(fd, line);
    CHECK(closedWithin(fd, 3000));
    ::close(fd);
  }
  finishesUnharmed(p, dir, "accel: job port: closed a connection from 127.0.0.1 that");
}

TEST_CASE("job channel: a connection that never joins is closed after 5 s, another job's token at once",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  Job job;
  auto p = startPair(job, dir);
  int silent = connectLoopback(job.job_port);
  const auto start = Clock::now();
  int other = connectLoopback(job.job_port);
  sendText(other, join(2, 1, "another-job"));
  auto refused = closedWithin(other, 3000);
  REQUIRE(refused);
  CHECK(contains(*refused, "\"t\":\"refuse\""));
  CHECK(contains(*refused, "offered another job's token"));
  ::close(other);
  CHECK(closedWithin(silent, 10000));
  const double waited = secondsSince(start);
  CHECK(waited > 4.5);
  CHECK(waited < 7.5);
  ::close(silent);
  finishesUnharmed(p, dir, "that sent no join within 5 s");
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
  REQUIRE(p.m1->waitForOutput("waiting", 1, 30000));
  int closed = 0;
  for (int fd : silent) closed += closedNow(fd) ? 1 : 0;
  CHECK(closed >= 24);  // at most 16 wait at once
  for (int fd : silent) ::close(fd);
  finishesUnharmed(p, dir, "to make room: too many connections waiting to join");
}

TEST_CASE("job channel: out of descriptors, machine 0 pauses accepting instead of spinning",
          "[launch][machines][hardening][failure]") {
  TempDir dir;
  Job job;
  auto p = startPair(job, dir);
  const pid_t m0 = p.m0->pid();
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
  finishesUnharmed(p, dir, "cannot accept on the job port (too many open files): pausing 200 ms");
}

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
      CHECK(contains(r.err, ") speaks version 2"));
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
