// SPDX-License-Identifier: Apache-2.0
// The event log's lines (lib/launch/watch/event.h) and its writer (event_log.h): accel's line
// with its header first, torchrun's line as Python's json.dumps writes it, RFC 3339 times, and a
// target that fills up said once while the others keep every line.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lib/launch/watch/event_log.h"
#include "tests/support/process.h"

using accel::launch::watch::Event;
using accel::launch::watch::eventLine;
using accel::launch::watch::EventLog;
using accel::launch::watch::pythonJson;
using accel::launch::watch::torchrunLine;
using accel::launch::watch::utcTime;

TEST_CASE("events: times in RFC 3339 UTC with microseconds", "[events][unit]") {
  CHECK(utcTime(0) == "1970-01-01T00:00:00.000000Z");
  CHECK(utcTime(1795762923.25) == "2026-11-27T07:02:03.250000Z");
  CHECK(utcTime(1795762923.9999996) == "2026-11-27T07:02:03.999999Z");  // never a 60th second
}

TEST_CASE("events: accel's line starts with its header, and a field cannot replace it", "[events][unit]") {
  Event e{"worker_exited", 0, "job-1", "h1", 2, 3, {{"rank", 5}, {"host", "forged"}, {"signal", nullptr}}};
  CHECK(eventLine(e) ==
        R"({"time":"1970-01-01T00:00:00.000000Z","event":"worker_exited","job":"job-1","host":"h1","machine":2,)"
        R"("round":3,"rank":5,"signal":null})");
}

TEST_CASE("events: torchrun's lines as its console handler prints them", "[events][unit]") {
  CHECK(pythonJson(nlohmann::ordered_json::parse(R"({"a": [1, null], "b": "\u00e9\"", "c": {}})")) ==
        R"({"a": [1, null], "b": "\u00e9\"", "c": {}})");
  Event failed{"worker_exited", 0, "none", "h", 0, 0, {{"rank", 1}, {"local_rank", 1}, {"pid", 77}, {"exit_code", 4}}};
  accel::launch::watch::TorchrunContext context;
  context.world_size = 2;
  CHECK(*torchrunLine(failed, context) ==
        R"({"name": "torchelastic.worker.status.FAILED", "source": "WORKER", "timestamp": 0, "metadata": )"
        R"({"run_id": "none", "global_rank": 1, "group_rank": 0, "worker_id": "77", "role": "default", )"
        R"("hostname": "h", "state": "FAILED", "total_run_time": 0, "rdzv_backend": "static", "raw_error": null, )"
        R"("metadata": "{\"group_world_size\": 1, \"entry_point\": \"python\", \"local_rank\": [1], )"
        R"(\"role_rank\": [1], \"role_world_size\": [2], \"exit_code\": [4], \"worker_pid\": [77]}", )"
        R"("agent_restarts": 0, "duration_ms": null}})");
  Event stopped = failed;
  stopped.fields["stopped_by_launcher"] = true;
  CHECK(torchrunLine(stopped, context)->find("\"torchelastic.worker.status.TERMINATED\"") != std::string::npos);
  CHECK_FALSE(torchrunLine(Event{"round_formed"}, context));  // torchrun has no such event
}

TEST_CASE("events: a full target is said once and dropped, the others keep every line", "[events][unit]") {
  accel::test::TempDir dir;
  std::vector<std::string> said;
  accel::launch::plan::LaunchPlan plan;
  plan.watching.event_file = "/dev/full";
  EventLog log([&](const std::string& line, bool) { said.push_back(line); });
  log.open(plan, dir.path());
  Event e{"worker_started", 0, "j", "h", 0, 0, {{"rank", 0}}};
  for (int i = 0; i < 3; ++i) log.record(e, {});
  log.recordLine("not json");
  log.recordLine(R"({"event":"from machine 1"})");
  REQUIRE(said.size() == 1);
  CHECK(said[0].find("the event log /dev/full cannot be written") != std::string::npos);
  const std::string kept = accel::test::slurp(dir.file("events.jsonl"));
  CHECK(accel::test::occurrences(kept, "\"worker_started\"") == 3);
  CHECK(accel::test::occurrences(kept, "from machine 1") == 1);
  CHECK(accel::test::occurrences(kept, "\n") == 4);
}
