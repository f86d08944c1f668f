// SPDX-License-Identifier: Apache-2.0
// The job channel's pure parts (lib/launch/job/): the codec of its typed messages, who may join,
// and the routes of questions about ranks. Milliseconds each.
#include <catch2/catch.hpp>

#include <string>

#include "lib/launch/job/job_messages.h"
#include "lib/launch/job/join_rules.h"
#include "lib/launch/job/question_routes.h"

using namespace accel;
using namespace accel::launch::job;
using namespace accel::launch::plan;
namespace job = accel::launch::job;

namespace {

job::Message roundTrip(const job::Message& m) {
  std::string error;
  auto back = job::decode(job::encode(m), error);
  INFO(job::encode(m) << "\n" << error);
  REQUIRE(back);
  return *back;
}

std::string refusal(const std::string& line) {
  std::string error;
  CHECK_FALSE(job::decode(line, error));
  return error;
}

}  // namespace

TEST_CASE("job messages: every kind encodes to a line that decodes to the same", "[job][unit]") {
  WorkerFailure f;
  f.machine = 1;
  f.host = "gpu07";
  f.rank = 3;
  f.who = "rank 3";
  f.exit_code = 7;
  f.exit_text = "exited with code 7";
  f.tail = {"disk full"};
  auto failed = std::get<job::Failed>(roundTrip(job::Failed{f, true}));
  CHECK(failed.failure.host == "gpu07");
  CHECK(failed.failure.tail == std::vector<std::string>{"disk full"});
  CHECK(failed.replaces);
  const auto join =
      std::get<job::Join>(roundTrip(job::Join{job::kProtocolVersion, 2, "h", 9, 3, 1, 6, "tok", 2, "default"}));
  CHECK(join.world == 6);
  CHECK(join.min_machines == 1);
  const job::Restart restart{
      4, 29511, std::nullopt, 1, "machine 2 (h2, 10.0.0.3) was lost", 1, {{2, "default"}, {2, "default"}}};
  const auto back = std::get<job::Restart>(roundTrip(restart));
  CHECK(back.restarts == 1);
  CHECK(back.why == restart.why);
  CHECK(back.machine == 1);
  CHECK(back.layout == restart.layout);
  const auto start = std::get<job::Start>(roundTrip(job::Start{job::kProtocolVersion, 29500, 2, restart.layout, 3, 1}));
  CHECK(start.round == 3);
  CHECK(start.restarts == 1);
  CHECK(std::get<job::End>(roundTrip(job::End{130, 2, "m", "h", std::nullopt})).signal == 2);
  CHECK(std::get<job::Ask>(roundTrip(job::Ask{42, 5})).rank == 5);
  CHECK(std::get<job::Tell>(roundTrip(job::Tell{42, "alive"})).text == "alive");
  CHECK(std::holds_alternative<job::Heartbeat>(roundTrip(job::Heartbeat{})));
}

TEST_CASE("stack messages: sw, sp, sd and pg round-trip, and a bad limit is refused", "[job][unit]") {
  CHECK(std::get<job::StacksWanted>(roundTrip(job::StacksWanted{7, 4.5})).seconds == 4.5);
  auto part = std::get<job::StackPart>(
      roundTrip(job::StackPart{7, 2, "h2", 5, 4242, "gdb", "spin", "", "#0 spin", "accel-flight 1"}));
  CHECK(part.rank == 5);
  CHECK(part.text == "#0 spin");
  CHECK(part.flight == "accel-flight 1");
  CHECK(std::get<job::StacksDone>(roundTrip(job::StacksDone{7, -1, "machine 2 (h2) sent no stacks"})).machine == -1);
  CHECK(std::holds_alternative<job::Progress>(roundTrip(job::Progress{})));
  std::string error;
  CHECK_FALSE(job::decode(R"({"t":"sw","id":1,"seconds":0})", error));
  CHECK(error == "field 'seconds': not in (0, 600]");
  CHECK_FALSE(job::decode(R"({"t":"pg","x":1})", error));
  CHECK(error == "unknown field 'x'");
}

TEST_CASE("straggler messages: ar, ck and ce round-trip, and a bad batch is refused", "[job][unit]") {
  accel::launch::flight::Arrivals a{3, "h1", {{2, 4242}, {3, 4243}}, {{2, 7, 5'000'000'123}, {3, 7, 5'000'060'000}}};
  const auto back = std::get<job::ArrivalsSent>(roundTrip(job::ArrivalsSent{a})).arrivals;
  CHECK(back.round == 3);
  CHECK(back.host == "h1");
  REQUIRE(back.ranks.size() == 2);
  CHECK(back.ranks[1].pid == 4243);
  REQUIRE(back.calls.size() == 2);
  CHECK(back.calls[0].ns == 5'000'000'123);
  CHECK(back.calls[1].ns == 5'000'060'000);
  CHECK(back.calls[1].seq == 7);
  CHECK(std::get<job::ClockProbe>(roundTrip(job::ClockProbe{9})).id == 9);
  CHECK(std::get<job::ClockEcho>(roundTrip(job::ClockEcho{9, 123456789})).ns == 123456789);
  CHECK(std::get<job::ClockEcho>(roundTrip(job::ClockEcho{9, -5})).ns == -5);
  const std::string event = R"({"event":"worker_started","rank":3,"host":"h\u00e9"})";
  CHECK(std::get<job::EventSent>(roundTrip(job::EventSent{event})).line == event);
  // A clock behind the batch's times (a negative base) still reads; a bad batch is refused, naming why.
  a.calls = {{2, 8, -40}, {3, 8, 10}};
  CHECK(std::get<job::ArrivalsSent>(roundTrip(job::ArrivalsSent{a})).arrivals.calls[0].ns == -40);
  CHECK(refusal(R"({"t":"ar","round":0,"host":"h","ranks":[1],"base":0,"calls":[]})") ==
        "field 'ranks': not rank and pid pairs");
  CHECK(refusal(R"({"t":"ar","round":0,"host":"h","ranks":[],"base":0,"calls":[1,2]})") ==
        "field 'calls': not rank, sequence number and time triples");
  CHECK(refusal(R"({"t":"ar","round":0,"host":"h","ranks":[],"base":0,"calls":[1,-2,3]})") ==
        "field 'calls': an entry is not an integer in 0..9007199254740992");
  CHECK(refusal(R"({"t":"ar","round":0,"host":"h","ranks":[],"base":0,"calls":[4294967296,2,3]})") ==
        "field 'calls': a rank or time out of range");
  CHECK(refusal(R"({"t":"ar","host":"h","ranks":[],"base":0,"calls":[]})") == "field 'round' is missing");
}

TEST_CASE("event messages: ev carries one JSON object line, and nothing else", "[job][unit]") {
  std::string error;
  CHECK_FALSE(job::decode(R"({"t":"ev","line":"[1,2]"})", error));
  CHECK(error == "field 'line': not one JSON object on one line");
  CHECK_FALSE(job::decode(R"({"t":"ev","line":"{\n}"})", error));
  CHECK_FALSE(job::decode(R"({"t":"ev"})", error));
  CHECK(error.find("'line'") != std::string::npos);
  // A line too long to send goes as an empty object, never cut into something else.
  const std::string huge = "{\"x\":\"" + std::string(job::kMaxEventLine, 'a') + "\"}";
  CHECK(std::get<job::EventSent>(roundTrip(job::EventSent{huge})).line == "{}");
}

TEST_CASE("job messages: what a worker printed, any bytes and any length, still decodes", "[job][unit]") {
  WorkerFailure f;
  f.who = "rank 0";
  f.exit_text = "exited with code 1";
  std::string latin1(5000, '\xE9');  // not UTF-8: each byte becomes U+FFFD (three bytes) first
  f.tail.assign(100, latin1);
  f.raised = latin1;
  auto back = std::get<job::Failed>(roundTrip(job::Failed{f, false}));
  CHECK(back.failure.tail.size() == job::kMaxLines);  // the last lines, which say most
  for (const auto& line : back.failure.tail) CHECK(line.size() <= job::kMaxLineText);
  CHECK(back.failure.raised.size() <= job::kMaxText);
}

TEST_CASE("job messages: anything but a well-formed message is refused, naming what is wrong", "[job][unit]") {
  CHECK(refusal(R"({"t":1})") == "field 't' (the message's kind) is missing or not a string");
  CHECK(refusal(R"({"t":"ended","round":0})") == "field 'ok' is missing");
  CHECK(refusal(R"({"t":"ended","round":"0","ok":true})") == "field 'round': string is not an integer");
  CHECK(refusal(R"({"t":"ended","round":-1,"ok":true})") == "field 'round': -1 is not in 0..1000000");
  CHECK(refusal(R"({"t":"hb","x":1})") == "unknown field 'x'");
  CHECK(refusal(R"({"t":"nope"})") == "unknown message kind 'nope'");
  CHECK(refusal(R"({"t":"h\u001b[2Jb"})") == "unknown message kind 'h?[2Jb'");  // nothing a terminal obeys
  CHECK(refusal("[1]") == "a JSON array, not an object");
  CHECK(refusal("{").rfind("not JSON", 0) == 0);
  CHECK(refusal(std::string(100, '[')) == "nested deeper than 4 levels");
  CHECK(refusal("{\"t\":\"" + std::string(job::kMaxLine, 'a') + "\"}").rfind("a line of", 0) == 0);
  CHECK(refusal(R"({"t":"failed","failure":{"machine":0},"replaces":false})").rfind("failure: field", 0) == 0);
}

TEST_CASE("job messages: the first line's token is read before its version", "[job][unit]") {
  std::string error;
  auto hello = job::readHello(R"({"t":"join","v":"x","token":"tok","host":"h"})", error);
  REQUIRE(hello);
  CHECK(hello->token == "tok");
  CHECK(hello->version == 0);  // unreadable: the door judges it only once the token matched
  CHECK(job::readHello(R"({"t":"join","token":"tok"})", error)->version == 1);  // the unversioned channel
  CHECK_FALSE(job::readHello(R"({"t":"hb"})", error));
  CHECK(job::sameToken("abc", "abc"));
  CHECK_FALSE(job::sameToken("abc", "abd"));
  CHECK_FALSE(job::sameToken("abc", "abcd"));
  CHECK(job::versionOf(R"({"t":"start","port":5})") == 1);
  CHECK(job::versionOf(R"({"t":"stop","round":0,"why":""})") == 0);
}

TEST_CASE("join rules: the job's shape and a free machine rank in range", "[job][unit]") {
  LaunchPlan plan;
  plan.num_machines = plan.min_machines = plan.max_machines = 3;
  plan.world_size = 6;
  plan.host = "m0";
  Joined first{"h1", "10.0.0.2", 7, {2, "default"}, 0};
  FindJoined joined = [&](int k) { return k == 1 ? &first : nullptr; };
  auto join = [](int k, int machines = 3, long long world = 6, int min = 3) {
    return job::Join{2, k, "h", 1, machines, min, world, "t", 1, "default"};
  };
  CHECK_FALSE(refuseJoin(plan, join(2), "10.0.0.3", joined, false));
  CHECK(refuseJoin(plan, join(2), "10.0.0.3", joined, true)->problem ==
        "machine 2 (h, 10.0.0.3) tried to join after the job started");
  CHECK(refuseJoin(plan, join(1), "10.0.0.3", joined, false)->problem.rfind("machine_rank 1 is claimed twice", 0) == 0);
  CHECK(refuseJoin(plan, join(7), "10.0.0.3", joined, false)->problem ==
        "machine 7 (h, 10.0.0.3) has machine_rank 7, but the job has 3 machines");
  CHECK(refuseJoin(plan, join(2, 3, 4), "10.0.0.3", joined, false)->problem.find("--num_processes 4") !=
        std::string::npos);
  CHECK(missingMachines(plan, joined).rfind("machine 2 of 3 did not join", 0) == 0);
  plan.min_machines = 2;  // --nnodes 2:3 against a machine given 1:3
  CHECK(refuseJoin(plan, join(2, 3, 6, 1), "10.0.0.3", joined, false)->problem ==
        "machine 2 (h, 10.0.0.3) has --num_machines 1:3 and --num_processes 6, machine 0 (m0) has 2:3 and 6");
}

TEST_CASE("question routes: answered once, forgotten when full", "[job][unit]") {
  QuestionRoutes routes;
  const long long a = routes.add(0, 11), b = routes.add(2, 12);
  CHECK(a != b);
  auto r = routes.take(b);
  REQUIRE(r);
  CHECK(r->asker == 2);
  CHECK(r->their_id == 12);
  CHECK_FALSE(routes.take(b));  // once
  for (size_t i = 0; i < QuestionRoutes::kMaxRoutes; ++i) routes.add(1, 0);
  CHECK_FALSE(routes.take(a));  // the oldest made room
}
