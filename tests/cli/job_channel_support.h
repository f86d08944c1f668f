// SPDX-License-Identifier: Apache-2.0
// What the job channel tests share (job_channel_test.cc, job_channel_versions_test.cc): a
// two-machine job on 127.0.0.1 whose workers wait for the file GO, then train; raw sockets to
// machine 0's job port. Header-only, for tests.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace accel::test::job_channel {

using Clock = std::chrono::steady_clock;
inline const std::string kToken = "job-channel-test-token";

struct Job {
  int port = freeLoopbackPort();
  int job_port = freeLoopbackPort();
  int machines = 2;
};

// Each machine's worker waits for the file GO, then trains: the channel is attacked while the
// job runs, and the weights show whether anything of it reached the training.
inline std::vector<std::string> machine(const Job& job, int rank, const TempDir& dir,
                                        std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {accelBinary(),
                                   "launch",
                                   "--cpu",
                                   "--num_machines",
                                   std::to_string(job.machines),
                                   "--machine_rank",
                                   std::to_string(rank),
                                   "--num_processes",
                                   std::to_string(job.machines),
                                   "--main_process_ip",
                                   "127.0.0.1",
                                   "--main_process_port",
                                   std::to_string(job.port),
                                   "--job_port",
                                   std::to_string(job.job_port),
                                   "--rdzv_token",
                                   kToken,
                                   "--grace_period",
                                   "2"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string go = dir.file("GO");
  argv.insert(argv.end(), {"--no_python", "sh", "-c",
                           "echo waiting; while [ ! -e " + go + " ]; do sleep 0.02; done; exec " + accelTrain() +
                               " --steps 300 --log_every 0"});
  return argv;
}

inline std::string crcIn(const std::string& out) {
  auto at = out.find("weights crc32 ");
  return at == std::string::npos ? "" : out.substr(at + 14, 8);
}

// The weights of the same job, undisturbed.
inline const std::string& referenceCrc() {
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

inline int connectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

inline void sendText(int fd, const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    ssize_t n = ::send(fd, text.data() + at, text.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;  // closed by the other side: what some cases expect
    at += static_cast<size_t>(n);
  }
}

// Reads until the other side closes: what it said, or nullopt when it stays open `timeout_ms`.
inline std::optional<std::string> closedWithin(int fd, int timeout_ms) {
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

// A running pair whose workers wait for GO.
struct Pair {
  std::unique_ptr<BackgroundProcess> m0, m1;
};
inline Pair startPair(const Job& job, const TempDir& dir) {
  Pair p{std::make_unique<BackgroundProcess>(machine(job, 0, dir), hermeticEnv(dir)),
         std::make_unique<BackgroundProcess>(machine(job, 1, dir), hermeticEnv(dir))};
  REQUIRE(p.m0->waitForOutput("waiting", 1, 60000));
  REQUIRE(p.m1->waitForOutput("waiting", 1, 60000));
  return p;
}

// GO, then both launchers end as the undisturbed job does, machine 0 having noted `note`.
inline void finishesUnharmed(Pair& p, const TempDir& dir, const std::string& note) {
  dir.write("GO", "");
  auto r0 = p.m0->wait(120000), r1 = p.m1->wait(120000);
  INFO(r0.err << "\n---\n" << r1.err);
  CHECK(r0.exit_code == 0);
  CHECK(r1.exit_code == 0);
  CHECK(crcIn(r0.out) == referenceCrc());
  CHECK(contains(r0.err, note));
}

inline std::string join(int version, int machine, const std::string& token) {
  return "{\"t\":\"join\",\"v\":" + std::to_string(version) + ",\"machine\":" + std::to_string(machine) +
         ",\"host\":\"intruder\",\"pid\":1,\"machines\":2,\"world\":2,\"token\":\"" + token + "\"}\n";
}

}  // namespace accel::test::job_channel
