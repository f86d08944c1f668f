// SPDX-License-Identifier: Apache-2.0
// The job's event log (lib/launch/watch/event_log.h) through the real binary: a job with a
// failure and a restart told event by event in the run's events.jsonl; --event_log given a file
// and a descriptor; torchrun's --event-log-handler console printing torchrun's lines; machine 0's
// log holding another machine's events; bad targets refused before any worker starts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

using namespace accel::test;
using Json = nlohmann::json;

namespace {

std::vector<std::string> eventsSh(const std::string& script) { return {"--no_python", "sh", "-c", script}; }

// Every line of an events file as JSON; a line that is not one object fails the test.
std::vector<Json> eventsIn(const std::string& path) {
  std::vector<Json> events;
  std::istringstream lines(slurp(path));
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    Json j = Json::parse(line, nullptr, false);
    REQUIRE(j.is_object());
    events.push_back(std::move(j));
  }
  return events;
}

// The one run folder --log_dir made under `logs`.
std::string onlyRunDir(const std::string& logs) {
  std::vector<std::string> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(logs)) dirs.push_back(entry.path().string());
  REQUIRE(dirs.size() == 1);
  return dirs[0];
}

std::vector<std::string> namesOf(const std::vector<Json>& events) {
  std::vector<std::string> names;
  for (const auto& e : events) names.push_back(e.at("event").get<std::string>());
  return names;
}

const Json& nth(const std::vector<Json>& events, const std::string& name, int n = 0) {
  for (const auto& e : events) {
    if (e.at("event") == name && n-- == 0) return e;
  }
  FAIL("no event " << name);
  throw std::logic_error("unreachable");
}

// Rank 1 fails in round 0 while rank 0 sleeps; both succeed in round 1.
const char* kFailOnce =
    "if [ $RANK = 1 ] && [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then sleep 0.5; exit 3; fi; "
    "if [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then sleep 30; fi; echo done";

}  // namespace

TEST_CASE("events: a failure and a restart, event by event, in the run's events.jsonl", "[launch][events]") {
  TempDir dir;
  auto job = run(machineLaunch({"--cpu", "--main_process_port", "0", "--num_processes", "2", "--max_restarts", "1",
                                "--grace_period", "5", "--log_dir", dir.file("story")},
                               {}, eventsSh(kFailOnce)),
                 {}, hermeticEnv(dir), 60000);
  INFO(job.err);
  REQUIRE(job.exit_code == 0);
  const auto events = eventsIn(onlyRunDir(dir.file("story")) + "/events.jsonl");
  const std::vector<std::string> expected = {"launcher_started", "job_started",    "rendezvous_done", "round_formed",
                                             "worker_started",   "worker_started", "worker_exited",   "worker_exited",
                                             "restart",          "round_formed",   "worker_started",  "worker_started",
                                             "worker_exited",    "worker_exited",  "job_ended"};
  CHECK(namesOf(events) == expected);
  const std::regex rfc3339(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");
  std::string last_time;
  for (const auto& e : events) {
    INFO(e.dump());
    CHECK(std::regex_match(e.at("time").get<std::string>(), rfc3339));
    CHECK(e.at("time").get<std::string>() >= last_time);  // in order
    last_time = e.at("time").get<std::string>();
    CHECK(e.at("machine") == 0);
    CHECK(!e.at("host").get<std::string>().empty());
    CHECK(e.at("job").get<std::string>().rfind("accel-", 0) == 0);
  }
  CHECK(nth(events, "job_started").at("world_size") == 2);
  CHECK(nth(events, "round_formed").at("round") == 0);
  CHECK(nth(events, "round_formed").at("procs") == Json::array({2}));
  const Json& failed = nth(events, "worker_exited", 0);  // rank 1 exits first; rank 0 is stopped after
  CHECK(failed.at("rank") == 1);
  CHECK(failed.at("exit_code") == 3);
  CHECK(failed.at("signal").is_null());
  CHECK(failed.at("stopped_by_launcher") == false);
  const Json& stopped = nth(events, "worker_exited", 1);
  CHECK(stopped.at("rank") == 0);
  CHECK(stopped.at("stopped_by_launcher") == true);
  CHECK(stopped.at("signal") == "SIGTERM");
  CHECK(stopped.at("exit_code") == 128 + 15);
  const Json& restart = nth(events, "restart");
  CHECK(restart.at("round") == 0);
  CHECK(restart.at("failed_rank") == 1);
  CHECK(restart.at("exit_code") == 3);
  CHECK(restart.at("restarts") == 1);
  CHECK(restart.at("next_round") == 1);
  CHECK(std::string(restart.at("reason")).find("rank 1") != std::string::npos);
  CHECK(nth(events, "round_formed", 1).at("round") == 1);
  CHECK(nth(events, "round_formed", 1).at("restarts") == 1);
  CHECK(nth(events, "worker_started", 2).at("round") == 1);
  CHECK(nth(events, "worker_started", 2).at("pid") != nth(events, "worker_started", 0).at("pid"));
  CHECK(nth(events, "worker_exited", 2).at("exit_code") == 0);
  const Json& end = nth(events, "job_ended");
  CHECK(end.at("exit_code") == 0);
  CHECK(end.at("verdict") == "succeeded");
  CHECK(end.at("round") == 1);
}

TEST_CASE("events: --event_log to a file and a descriptor, and torchrun's console handler", "[launch][events]") {
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  auto job = run(machineLaunch({"--cpu", "--main_process_port", "0", "--num_processes", "2", "--event_log", file,
                                "--event-log-handler", "console"},
                               {}, eventsSh("[ $RANK = 1 ] && exit 4; exit 0")),
                 {}, hermeticEnv(dir), 60000);
  INFO(job.err);
  REQUIRE(job.exit_code == 4);
  const auto events = eventsIn(file);
  CHECK(namesOf(events).front() == "launcher_started");
  CHECK(nth(events, "job_ended").at("verdict") == "failed");
  CHECK(nth(events, "job_ended").at("failure").at("rank") == 1);
  CHECK(nth(events, "job_ended").at("exit_code") == 4);
  // torchrun's lines: its Event, key for key, with its names and states.
  std::vector<Json> torchrun;
  std::istringstream err(job.err);
  for (std::string line; std::getline(err, line);) {
    if (line.rfind("{\"name\": \"torchelastic.", 0) == 0) torchrun.push_back(Json::parse(line));
  }
  REQUIRE(torchrun.size() == 6);  // RENDEZVOUS, START x2, one SUCCEEDED and one FAILED worker, the agent's FAILED
  CHECK(torchrun[0].at("name") == "torchelastic.worker.status.RENDEZVOUS");
  std::vector<std::string> keys;
  for (const auto& [key, value] : torchrun[1].at("metadata").items()) keys.push_back(key);
  CHECK(keys.size() == 13);
  CHECK(torchrun[1].at("source") == "WORKER");
  CHECK(torchrun[1].at("metadata").at("state") == "START");
  CHECK(torchrun.back().at("name") == "torchelastic.worker.status.FAILED");
  CHECK(torchrun.back().at("source") == "AGENT");
  bool failed_worker = false;
  for (const auto& e : torchrun) {
    if (e.at("name") != "torchelastic.worker.status.FAILED" || e.at("source") != "WORKER") continue;
    failed_worker = true;
    const Json md = Json::parse(e.at("metadata").at("metadata").get<std::string>());
    CHECK(md.at("exit_code") == Json::array({4}));
    CHECK(e.at("metadata").at("global_rank") == 1);
  }
  CHECK(failed_worker);

  // A descriptor the caller opened: the same events, appended there.
  const std::string fd_file = dir.file("fd.jsonl");
  std::vector<std::string> argv = machineLaunch(
      {"--cpu", "--main_process_port", "0", "--num_processes", "2", "--event_log", "fd:7"}, {}, eventsSh("exit 0"));
  std::string script = "exec";
  for (const auto& a : argv) script += " '" + a + "'";
  auto via_fd = run({"sh", "-c", script + " 7>>'" + fd_file + "'"}, {}, hermeticEnv(dir), 60000);
  INFO(via_fd.err);
  REQUIRE(via_fd.exit_code == 0);
  const auto fd_events = eventsIn(fd_file);
  CHECK(namesOf(fd_events).back() == "job_ended");
  CHECK(occurrences(slurp(fd_file), "\"event\":\"worker_started\"") == 2);
}

TEST_CASE("events: machine 0's log holds every machine's events", "[launch][events][machines]") {
  TempDir dir;
  JobPorts ports;
  auto flags = [&](int machine, const std::string& logs) {
    return machineLaunch({"--cpu", "--num_machines", "2", "--machine_rank", std::to_string(machine), "--num_processes",
                          "4", "--main_process_ip", "127.0.0.1", "--main_process_port", std::to_string(ports.port),
                          "--job_port", std::to_string(ports.job_port), "--log_dir", logs},
                         {}, eventsSh("sleep 0.5"));
  };
  BackgroundProcess m0(flags(0, dir.file("logs0")), hermeticEnv(dir));
  auto m1 = run(flags(1, dir.file("logs1")), {}, hermeticEnv(dir), 60000);
  auto r0 = m0.wait(30000);
  INFO(r0.err << m1.err);
  REQUIRE(r0.exit_code == 0);
  REQUIRE(m1.exit_code == 0);
  const auto all = eventsIn(onlyRunDir(dir.file("logs0")) + "/events.jsonl");
  std::set<int> ranks_started;
  int machine1_events = 0;
  for (const auto& e : all) {
    if (e.at("event") == "worker_started") ranks_started.insert(e.at("rank").get<int>());
    if (e.at("machine") == 1) ++machine1_events;
  }
  CHECK(ranks_started == std::set<int>{0, 1, 2, 3});
  CHECK(machine1_events >= 5);  // launcher_started, two worker_started, two worker_exited
  CHECK(nth(all, "round_formed").at("procs") == Json::array({2, 2}));
  // Machine 1's own log holds its own events only.
  for (const auto& e : eventsIn(onlyRunDir(dir.file("logs1")) + "/events.jsonl")) CHECK(e.at("machine") == 1);
}

TEST_CASE("events: bad event logs are refused before any worker starts", "[launch][events][errors]") {
  TempDir dir;
  auto refused = [&](std::vector<std::string> flags, const std::string& says) {
    auto r = run(launchArgs(std::move(flags), {}), {}, hermeticEnv(dir), 30000);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, says));
    CHECK_FALSE(contains(r.out, "env RANK="));
  };
  refused({"--event_log", "fd:x"}, "--event_log 'fd:x': fd: is followed by a descriptor number");
  refused({"--event_log", "fd:77"}, "descriptor 77 is not open in the launcher");
  refused({"--event-log-handler", "file"}, "--event-log-handler 'file' is not one of torchrun's handlers");
  refused({"--metrics_linger", "5"}, "--metrics_linger applies to /metrics");
  // An event log that cannot be opened is said, and the job goes on.
  auto r = run(launchArgs({"--event_log", dir.file("missing/events.jsonl")}, {}), {}, hermeticEnv(dir), 30000);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "warning: the event log " + dir.file("missing/events.jsonl") + " cannot be opened"));
}

TEST_CASE("events: a hang is detected, every rank's stack gathered, and the job's end told", "[launch][events]") {
  TempDir dir;
  auto job = run(machineLaunch({"--cpu", "--main_process_port", "0", "--num_processes", "2", "--hang_timeout", "2",
                                "--collective_timeout", "120", "--grace_period", "2", "--log_dir", dir.file("story")},
                               {}, {runtimeWorker(), "spin", "1"}),
                 {}, hermeticEnv(dir), 60000);
  INFO(job.err);
  CHECK(job.exit_code == 1);
  const auto events = eventsIn(onlyRunDir(dir.file("story")) + "/events.jsonl");
  const auto names = namesOf(events);
  auto at = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) - names.begin(); };
  REQUIRE(at("hang_detected") < static_cast<long>(names.size()));
  CHECK(at("hang_detected") < at("stacks_gathered"));
  CHECK(at("stacks_gathered") < at("job_ended"));
  CHECK(std::string(nth(events, "hang_detected").at("reason")).find("no rank made progress for 2 s") == 0);
  CHECK(nth(events, "stacks_gathered").at("stacks") == 2);
  CHECK(nth(events, "job_ended").at("exit_code") == 1);
  CHECK(nth(events, "job_ended").at("verdict") == "hung");
}
