// SPDX-License-Identifier: Apache-2.0
// The head's orders (lib/launch/fleet/head_orders.h) through their JSON line and a pipe, and what
// a launcher started by the head makes of them.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "lib/common/build_info.h"
#include "lib/common/error.h"
#include "lib/launch/fleet/head_orders.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/settings/launch_args.h"
#include "tests/support/errors.h"
#include "tests/support/fake_facts.h"
#include "tests/support/process.h"

using namespace accel;
using namespace accel::test;
using namespace accel::launch::fleet;
using namespace accel::launch::plan;
using namespace accel::launch::settings;
using namespace accel::launch::job;
using accel::test::usageError;
using Catch::Matchers::Contains;
namespace job = accel::launch::job;

namespace {

HeadOrders sampleOrders() {
  HeadOrders o;
  o.protocol = job::kProtocolVersion;
  o.version = buildInfo().version;
  o.place = {"node-1", 1, 3, "10.0.0.1", 29555, 2, "1,3", "f00dfeedf00dfeed", "accel-0123456789abcdef"};
  o.cwd = "/work/dir with space";
  o.env = {{"NCCL_DEBUG", "INFO"}, {"PYTHONPATH", "/work:/lib"}, {"QUOTED", "a \"b\" 'c'\n\\d"}};
  o.args = {"--mixed_precision", "fp16", "train.py", "--lr", "1e-3", "arg with \"quotes\" and\nnewline"};
  return o;
}

void checkSame(const HeadOrders& a, const HeadOrders& b) {
  CHECK(a.protocol == b.protocol);
  CHECK(a.version == b.version);
  CHECK(a.place == b.place);
  CHECK(a.cwd == b.cwd);
  CHECK(a.env == b.env);
  CHECK(a.args == b.args);
  CHECK(a.config_path == b.config_path);
  CHECK(a.config_text == b.config_text);
}

// The encoded sample as JSON, for a test to spoil one field.
nlohmann::json sampleJson() { return nlohmann::json::parse(encodeHeadOrders(sampleOrders())); }

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    closeWriter();
    if (r >= 0) ::close(r);
  }
  void write(const std::string& text) const {
    REQUIRE(::write(w, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  void closeWriter() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

}  // namespace

TEST_CASE("head orders: encode and decode round trip, with and without a config file", "[fleet]") {
  HeadOrders o = sampleOrders();
  const std::string line = encodeHeadOrders(o);
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line, whatever the fields hold
  checkSame(decodeHeadOrders(line), o);

  o.config_path = "/home/u/.cache/huggingface/accelerate/default_config.yaml";
  o.config_text = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n# comment: \"x\"\n";
  const std::string with_config = encodeHeadOrders(o);
  CHECK(with_config.find('\n') == with_config.size() - 1);
  checkSame(decodeHeadOrders(with_config), o);

  // A config file's text may be larger than any other field (up to the line's 4 MiB).
  o.config_text = std::string(2 * 1024 * 1024, 'x');
  checkSame(decodeHeadOrders(encodeHeadOrders(o)), o);

  // Empty collections and an empty gpu_ids stay empty.
  HeadOrders bare = sampleOrders();
  bare.env.clear();
  bare.args.clear();
  bare.place.gpu_ids.clear();
  checkSame(decodeHeadOrders(encodeHeadOrders(bare)), bare);
}

TEST_CASE("head orders: another protocol names both versions", "[fleet]") {
  auto j = sampleJson();
  j["protocol"] = job::kProtocolVersion + 1;
  j["version"] = "9.8.7";
  const auto e = usageError([&] { decodeHeadOrders(j.dump() + "\n"); });
  CHECK_THAT(e.what(), Contains("accel 9.8.7") && Contains("accel " + buildInfo().version) &&
                           Contains("protocol " + std::to_string(job::kProtocolVersion + 1)) &&
                           Contains("protocol " + std::to_string(job::kProtocolVersion)));
  CHECK_THAT(e.hint(), Contains("same accel on every host"));

  // An older head with other fields too: the protocol is checked before any field.
  const auto old = usageError([] { decodeHeadOrders(R"({"protocol": 1, "version": "0.0.1", "something": "else"})"); });
  CHECK_THAT(old.what(), Contains("accel 0.0.1 (job protocol 1)"));

  for (const char* line : {R"({"version": "1.0"})", R"({"protocol": "4"})", R"({"protocol": 4.5})"}) {
    INFO(line);
    CHECK_THAT(usageError([&] { decodeHeadOrders(line); }).what(), Contains("no protocol"));
  }
}

TEST_CASE("head orders: a missing, wrong-typed or unknown field is named", "[fleet]") {
  for (const char* field : {"version", "host", "machine_rank", "num_machines", "main_addr", "main_port", "procs",
                            "gpu_ids", "token", "run_id", "cwd", "env", "args", "config"}) {
    INFO(field);
    auto missing = sampleJson();
    missing.erase(field);
    const auto e = usageError([&] { decodeHeadOrders(missing.dump()); });
    CHECK_THAT(e.what(), Contains(std::string("'") + field + "'") && Contains("missing"));
  }
  const std::vector<std::pair<const char*, nlohmann::json>> wrong = {
      {"host", 3},        {"machine_rank", "1"}, {"num_machines", 0},  {"main_port", 0},
      {"main_port", 1.5}, {"procs", 0},          {"token", nullptr},   {"env", "NCCL_DEBUG=INFO"},
      {"args", "a b"},    {"args", {1, 2}},      {"config", "a: b"},   {"cwd", nlohmann::json::array()},
      {"run_id", true},   {"version", 7},        {"machine_rank", -1}, {"gpu_ids", {1, 3}}};
  for (const auto& [field, value] : wrong) {
    INFO(field << " = " << value.dump());
    auto j = sampleJson();
    j[field] = value;
    CHECK_THAT(usageError([&] { decodeHeadOrders(j.dump()); }).what(), Contains(std::string("'") + field + "'"));
  }
  // The environment's values are named by their variable; the config's fields by theirs.
  auto env = sampleJson();
  env["env"]["NCCL_DEBUG"] = 1;
  CHECK_THAT(usageError([&] { decodeHeadOrders(env.dump()); }).what(), Contains("env.NCCL_DEBUG"));
  auto config = sampleJson();
  config["config"] = {{"path", "/c.yaml"}};
  CHECK_THAT(usageError([&] { decodeHeadOrders(config.dump()); }).what(),
             Contains("config") && Contains("'text'") && Contains("missing"));
  config["config"] = {{"path", "/c.yaml"}, {"text", "x: 1"}, {"mode", "r"}};
  CHECK_THAT(usageError([&] { decodeHeadOrders(config.dump()); }).what(), Contains("unknown field 'mode'"));

  auto extra = sampleJson();
  extra["tokens"] = "typo";
  CHECK_THAT(usageError([&] { decodeHeadOrders(extra.dump()); }).what(), Contains("unknown field 'tokens'"));
}

TEST_CASE("head orders: read from a pipe, one line within the time", "[fleet]") {
  const HeadOrders o = sampleOrders();
  SECTION("a line that is there") {
    Pipe p;
    p.write(encodeHeadOrders(o));
    checkSame(readHeadOrders(p.r, 5), o);  // the writer stays open: the link to the head
  }
  SECTION("a line written in pieces, the last a moment later") {
    Pipe p;
    const std::string line = encodeHeadOrders(o);
    p.write(line.substr(0, 10));
    std::thread late([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      p.write(line.substr(10));
    });
    HeadOrders got;
    REQUIRE_NOTHROW(got = readHeadOrders(p.r, 10));
    late.join();
    checkSame(got, o);
  }
  SECTION("a line larger than the pipe's buffer") {
    HeadOrders big = o;
    big.config_path = "/c.yaml";
    big.config_text = std::string(3 * 1024 * 1024, 'y');
    Pipe p;
    const std::string line = encodeHeadOrders(big);
    std::thread writer([&] { p.write(line); });
    HeadOrders got;
    REQUIRE_NOTHROW(got = readHeadOrders(p.r, 20));
    writer.join();
    checkSame(got, big);
  }
  SECTION("the writer closes before a newline") {
    Pipe p;
    std::string line = encodeHeadOrders(o);
    line.pop_back();
    p.write(line);
    p.closeWriter();
    CHECK_THAT(usageError([&] { readHeadOrders(p.r, 5); }).what(), Contains("closed its link"));
  }
  SECTION("the writer closes without writing") {
    Pipe p;
    p.closeWriter();
    CHECK_THAT(usageError([&] { readHeadOrders(p.r, 5); }).what(), Contains("closed its link"));
  }
  SECTION("nothing within the time") {
    Pipe p;
    const auto start = std::chrono::steady_clock::now();
    const auto e = usageError([&] { readHeadOrders(p.r, 0.2); });
    const double took = accel::test::secondsSince(start);
    CHECK_THAT(e.what(), Contains("no orders from the head within 0.2 s"));
    CHECK_THAT(e.hint(), Contains("--hostfile"));
    CHECK(took >= 0.15);
    CHECK(took < 5);
  }
  SECTION("half a line, then nothing within the time") {
    Pipe p;
    p.write(encodeHeadOrders(o).substr(0, 20));
    CHECK_THAT(usageError([&] { readHeadOrders(p.r, 0.2); }).what(), Contains("no orders from the head within"));
  }
  SECTION("more than one line") {
    Pipe p;
    p.write(encodeHeadOrders(o) + encodeHeadOrders(o));
    CHECK_THAT(usageError([&] { readHeadOrders(p.r, 5); }).what(), Contains("more than its orders' line"));
  }
  SECTION("more than the orders' limit without a newline") {
    ::signal(SIGPIPE, SIG_IGN);  // the writer may still be writing when the reader gives up
    Pipe p;
    std::thread writer([&] {
      const std::string chunk(1024 * 1024, 'z');
      for (int i = 0; i < 5; ++i) {
        if (::write(p.w, chunk.data(), chunk.size()) < 0) return;  // the reader gave up
      }
    });
    const auto e = usageError([&] { readHeadOrders(p.r, 20); });
    ::close(p.r);  // a blocked writer sees EPIPE
    p.r = -1;
    writer.join();
    CHECK_THAT(e.what(), Contains("longer than 4 MiB"));
  }
}

TEST_CASE("head orders: the machine's place outranks every other source of placement", "[fleet]") {
  HeadOrders o = sampleOrders();
  o.args = {"--num_processes",   "8",       "--num_machines",      "4",      "--machine_rank",    "3",
            "--main_process_ip", "1.2.3.4", "--main_process_port", "1111",   "--mixed_precision", "fp16",
            "--hostfile",        "/h",      "--include",           "node-1", "--dry_run",         "train.py",
            "--num_processes",   "5"};
  FakeMachine m(4);
  auto settings = [&] {
    return resolveLaunchSettings(parseLaunchArgs(o.args), std::nullopt, "c.yaml", m.facts, &o.place);
  };
  const LaunchSettings s = settings();
  CHECK(s.from_head);
  CHECK_FALSE(s.dry_run);
  CHECK(s.hosts.how == Hosts::How::None);  // a launcher a head started never starts others
  CHECK(settingText(s, "num_machines") == "3 (the head's orders)");
  CHECK(settingText(s, "machine_rank") == "1 (the head's orders)");
  CHECK(settingText(s, "main_process_ip") == "10.0.0.1 (the head's orders)");
  CHECK(settingText(s, "main_process_port") == "29555 (the head's orders)");
  CHECK(settingText(s, "nproc_per_node") == "2 (the head's orders)");  // the head checked the total
  CHECK(s.placement.world_at_join);                                    // machines may differ
  CHECK(settingText(s, "gpu_ids") == "1,3 (the head's orders)");
  CHECK(settingText(s, "mixed_precision") == "fp16 (command line)");  // the rest as typed
  CHECK(settingText(s, "stdin_rank") == "-1 (the head's orders)");    // the user types into the head only
  CHECK(s.identity.token.value == "f00dfeedf00dfeed");
  CHECK(s.identity.run_id.value == "accel-0123456789abcdef");
  CHECK(s.command == std::vector<std::string>{"train.py", "--num_processes", "5"});  // the program's own
  const LaunchPlan p = build(s, m.facts);
  REQUIRE(p.workers.size() == 2);
  CHECK(p.workers[1].rank == 3);
  CHECK(envOf(p, p.workers[0], "CUDA_VISIBLE_DEVICES") == "1,3");
  CHECK(envOf(p, p.workers[0], "ACCEL_STORE_TOKEN") == "f00dfeedf00dfeed");

  SECTION("gpu_ids only when the orders give them") {
    o.place.gpu_ids = "";
    o.args = {"--cpu", "train.py"};
    const LaunchSettings bare = settings();
    CHECK_FALSE(bare.keys.origin("gpu_ids").source == Source::Head);
    CHECK(bare.placement.nproc_per_node.value == 2);
  }
  SECTION("torchrun's placement flags give way") {
    o.args = {"--nnodes",         "4", "--node_rank", "2",   "--master_addr", "9.9.9.9", "--master_port", "9",
              "--nproc_per_node", "7", "--rdzv_id",   "old", "--rdzv_token",  "old",     "t.py"};
    const LaunchSettings t = settings();
    CHECK(t.placement.num_machines.value == 3);
    CHECK(t.placement.machine_rank.value == 1);
    CHECK(t.placement.main_process_ip.value == "10.0.0.1");
    CHECK(t.placement.main_process_port.value == 29555);
    CHECK(t.placement.nproc_per_node.value == 2);
    CHECK(t.identity.run_id.value == "accel-0123456789abcdef");
    CHECK(t.identity.token.value == "f00dfeedf00dfeed");
  }
  SECTION("a rendezvous endpoint and --standalone give way") {
    o.args = {"--rdzv_endpoint", "h:1234", "t.py"};
    CHECK(settings().placement.main_process_ip.value == "10.0.0.1");
    o.args = {"--standalone", "t.py"};
    CHECK(settings().placement.num_machines.value == 3);
  }
}

TEST_CASE("head orders: a line that is not a JSON object is a usage error", "[fleet]") {
  for (const char* line : {"garbage\n", "[1, 2]\n", "\"text\"\n", "{\"protocol\": 4\n"}) {
    INFO(line);
    CHECK_THAT(usageError([&] { decodeHeadOrders(line); }).what(), Contains("head orders"));
  }
}
