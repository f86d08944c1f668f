// SPDX-License-Identifier: Apache-2.0
// Every machine's logs in one place, its parts alone (lib/launch/supervise/log_forwarder.h,
// log_collector.h): chunks in order, the newest bytes dropped past the bound and told where, bytes
// with no machine 0 to take them counted as lost, everything sent at the round's end; host names
// made safe for a path; statuses cut to fit the job channel; signal names for every signal.
#include <catch2/catch.hpp>

#include <signal.h>

#include "lib/common/process/process_state.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/supervise/log_collector.h"
#include "lib/launch/supervise/log_forwarder.h"
#include "lib/launch/watch/status_json.h"
#include "tests/support/process.h"

using accel::launch::job::JobEvent;
using accel::launch::job::JobLink;
using accel::launch::job::LogChunk;
using accel::launch::supervise::LogForwarder;

namespace {

// A member's link that takes `room` chunks a turn (all of them when forced), or has no machine 0.
class LogsLink final : public JobLink {
 public:
  int room = 1000;
  bool nobody = false;
  std::vector<LogChunk> sent;
  LogSend sendLogs(const LogChunk& c, bool force) override {
    if (nobody) return LogSend::Nobody;
    if (!force && room <= 0) return LogSend::Later;
    --room;
    sent.push_back(c);
    return LogSend::Sent;
  }
  int rendezvous(int) override { return 0; }
  void addPollFds(std::vector<pollfd>&) const override {}
  int timeoutMs() const override { return -1; }
  std::vector<JobEvent> service(const std::vector<pollfd>&) override { return {}; }
  void workerFailed(const accel::launch::job::WorkerFailure&, bool) override {}
  void interrupted(int) override {}
  void roundEnded(int, bool, long long) override {}
  void ask(long long, int) override {}
  void tell(long long, const std::string&) override {}
  void hold(bool) override {}
  void progressed() override {}
  void stacksCollected(long long, const std::vector<accel::launch::stacks::RankStack>&) override {}
  void wantStacks(long long, double) override {}
};

std::string joined(const std::vector<LogChunk>& chunks, int stream) {
  std::string all;
  for (const auto& c : chunks) {
    if (c.stream == stream) all += c.data;
  }
  return all;
}

}  // namespace

TEST_CASE("log forwarder: every byte in order, in chunks, the streams apart", "[logs][unit]") {
  LogForwarder f;
  LogsLink link;
  std::string out;
  for (int i = 0; i < 5000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    out += line;
    f.push(0, 0, 1, line);
    if (i % 7 == 0) f.push(0, 0, 2, "e");
  }
  CHECK(f.service(link).empty());
  CHECK(joined(link.sent, 1) == out);
  CHECK(joined(link.sent, 2).size() == 715);
  for (const auto& c : link.sent) CHECK(c.data.size() <= LogForwarder::kChunk);
  CHECK(f.held() == 0);
}

TEST_CASE("log forwarder: past its bound the newest bytes are dropped, said once, told where", "[logs][unit]") {
  LogForwarder f;
  LogsLink link;
  link.room = 0;  // the channel takes nothing for now
  const std::string block(1 << 20, 'x');
  for (size_t i = 0; i < LogForwarder::kMaxHeld / block.size() + 3; ++i) f.push(1, 2, 1, block);
  CHECK(f.held() == LogForwarder::kMaxHeld);
  auto lines = f.service(link);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("falls behind this machine's logs: some of local rank 2's stdout") != std::string::npos);
  CHECK(f.service(link).empty());  // said once
  link.room = 1000;                // the channel catches up
  CHECK(f.service(link).empty());
  CHECK(joined(link.sent, 1).size() == LogForwarder::kMaxHeld);
  f.push(1, 2, 1, "after\n");     // the first bytes after the drop carry its count
  lines = f.service(link, true);  // the round's end: everything goes, and the total is said
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "local rank 2's stdout: 3145728 bytes were not sent to machine 0's --log_dir (they are in "
        "this machine's)");
  CHECK(link.sent.back().data == "after\n");
  CHECK(link.sent.back().dropped == 3145728);
  CHECK(f.held() == 0);
}

TEST_CASE("log forwarder: bytes with no machine 0 to take them are counted as lost", "[logs][unit]") {
  LogForwarder f;
  LogsLink link;
  link.nobody = true;
  f.push(0, 1, 2, std::string(1000, 'e'));
  const auto lines = f.service(link, true);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("local rank 1's stderr: 1000 bytes were not sent") == 0);
}

TEST_CASE("log collector: a host name from another machine is one safe path component", "[logs][unit]") {
  using accel::launch::supervise::safeHostName;
  CHECK(safeHostName("node-017.cluster") == "node-017.cluster");
  CHECK(safeHostName("../../etc") == "_._.._etc");
  CHECK(safeHostName("a/b c\n") == "a_b_c_");
  CHECK(safeHostName("") == "host");
  CHECK(safeHostName(std::string(200, 'h')).size() == 64);
}

TEST_CASE("status: cut to fit the job channel, the lines first", "[top][unit]") {
  accel::launch::watch::MachineStatus s;
  for (int r = 0; r < 200; ++r) {
    accel::launch::watch::RankStatus rank;
    rank.rank = r;
    rank.lines.assign(20, std::string(300, '"'));  // each quote doubles inside the message
    s.ranks.push_back(rank);
  }
  const std::string text = accel::launch::watch::fittedStatusJson(s, accel::launch::job::kMaxStatusText);
  CHECK(text.size() <= accel::launch::job::kMaxStatusText);
  const auto back = accel::launch::watch::statusFromJson(nlohmann::json::parse(text));
  CHECK(back.ranks.size() == 200);  // the lines went, every rank stayed
  CHECK(back.ranks[0].lines.empty());
  std::string error;
  const auto line = accel::launch::job::encode(accel::launch::job::StatusSent{text});
  CHECK(line.size() <= accel::launch::job::kMaxLine);
  CHECK(accel::launch::job::decode(line, error));
}

TEST_CASE("signal names: every signal has one, the real-time ones too", "[unit]") {
  CHECK(accel::process::signalName(SIGTERM) == "SIGTERM");
  CHECK(accel::process::signalName(SIGRTMIN + 2) == "SIG" + std::to_string(SIGRTMIN + 2));
}
