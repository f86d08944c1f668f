// SPDX-License-Identifier: Apache-2.0
// `accel top` and /metrics where NVML is the fake one (tests/fakes/fake_nvml.cc): each rank's GPU,
// its utilisation and the memory its process holds there; `accel top --events` following a job's
// event log to its end; a job that writes no event log named with the flag that makes one.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "lib/common/socket.h"
#include "tests/cli/launch_support.h"

using namespace accel::test;

namespace {

// GET /metrics from 127.0.0.1:`port`: the whole answer.
std::string scrape(int port) {
  std::string error;
  const int fd =
      accel::net::connectTcp("127.0.0.1", port, std::chrono::steady_clock::now() + std::chrono::seconds(5), error);
  if (fd < 0) return "";
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[65536];
  for (int i = 0; i < 500; ++i) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) answer.append(buffer, static_cast<size_t>(n));
    if (n == 0) break;
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;
    if (n < 0) usleep(10000);
  }
  ::close(fd);
  return answer;
}

}  // namespace

TEST_CASE("top: each rank's GPU, its utilisation and memory, in --json and /metrics", "[launch][top]") {
  TempDir dir;
  const std::string processes = dir.file("nvml-processes");
  const int port = freeLoopbackPort();
  auto env = launchEnv(dir, 2, {{"FAKE_NVML_PROCESSES_FILE", processes}});
  // Each worker lists its own process on its GPU, 1 GiB, as NVML would.
  BackgroundProcess job({accelBinary(), "launch", "--multi_gpu", "--num_processes", "2", "--main_process_port", "0",
                         "--metrics_port", std::to_string(port), "--no_python", "sh", "-c",
                         "echo \"$LOCAL_RANK $$ 1073741824 0\" >> " + processes + "; echo ready; sleep 30"},
                        env);
  REQUIRE(job.waitForOutput("ready", 2));
  auto top = run({accelBinary(), "top", "--json", std::to_string(job.pid())}, {}, env, 60000);
  INFO(top.out << top.err);
  REQUIRE(top.exit_code == 0);
  const auto j = nlohmann::json::parse(top.out);
  REQUIRE(j["ranks"].size() == 2);
  for (int r = 0; r < 2; ++r) {
    CHECK(j["ranks"][r]["gpu"] == r);
    CHECK(j["ranks"][r]["gpu_percent"] == 40 + r);
    CHECK(j["ranks"][r]["gpu_bytes"] == 1073741824);
  }
  auto once = run({accelBinary(), "top", "--once", std::to_string(job.pid())}, {}, {{"COLUMNS", "80"}}, 60000);
  INFO(once.out);
  CHECK(contains(once.out, "GPU%"));
  CHECK(contains(once.out, "1.0G"));
  const std::string metrics = scrape(port);
  CHECK(contains(metrics, "accel_rank_gpu_utilization_percent{"));
  CHECK(contains(metrics, "rank=\"1\",local_rank=\"1\"} 41\n"));
  CHECK(contains(metrics, "accel_rank_gpu_memory_bytes{"));
  CHECK(contains(metrics, "} 1073741824\n"));
  job.signal(SIGTERM);
  job.wait(30000);
}

TEST_CASE("top: --events follows the job's event log to its end", "[launch][top][events]") {
  TempDir dir;
  BackgroundProcess job(
      machineLaunch({"--cpu", "--num_processes", "2", "--main_process_port", "0", "--log_dir", dir.file("logs")}, {},
                    {"--no_python", "sh", "-c", "echo ready; sleep 3"}),
      hermeticEnv(dir));
  REQUIRE(job.waitForOutput("ready", 2));
  auto events = run({accelBinary(), "top", "--events", std::to_string(job.pid())}, {}, hermeticEnv(dir), 60000);
  INFO(events.out << events.err);
  CHECK(events.exit_code == 0);
  CHECK(contains(events.out, "\"event\":\"worker_started\""));
  CHECK(contains(events.out, "\"event\":\"job_ended\""));  // followed to the job's end
  CHECK(job.wait(30000).exit_code == 0);

  BackgroundProcess silent(machineLaunch({"--cpu", "--num_processes", "2", "--main_process_port", "0"}, {},
                                         {"--no_python", "sh", "-c", "echo ready; sleep 10"}),
                           hermeticEnv(dir));
  REQUIRE(silent.waitForOutput("ready", 2));
  auto refused = run({accelBinary(), "top", "--events", std::to_string(silent.pid())}, {}, hermeticEnv(dir), 60000);
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.err, "writes no event log that this machine can read"));
  CHECK(contains(refused.err, "--log_dir DIR"));
  silent.signal(SIGTERM);
}
