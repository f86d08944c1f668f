// SPDX-License-Identifier: Apache-2.0
// How a hostfile launch reaches each host (lib/launch/fleet/ssh_command.h): the environment the
// head forwards (DeepSpeed's prefixes and .deepspeed_env files) and the command line that starts
// each host (directly, or ssh in batch mode, its remote command run by a real /bin/sh here).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "lib/common/build_info.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/fleet/ssh_command.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/settings/host_environment.h"
#include "lib/launch/settings/host_launch.h"
#include "tests/support/errors.h"
#include "tests/support/fake_facts.h"
#include "tests/support/process.h"

using namespace accel;
using namespace accel::launch::fleet;
using namespace accel::launch::job;
using namespace accel::launch::plan;
using namespace accel::launch::settings;
namespace settings = accel::launch::settings;
using accel::test::TempDir;
using accel::test::usageError;
using Catch::Matchers::Contains;
namespace job = accel::launch::job;

namespace {

// What the head knows when it forwards its environment: its variables, its directory, the home.
struct Head {
  std::map<std::string, std::string> env;
  std::string cwd, home;
};

Head facts(const TempDir& cwd, const TempDir& home, std::map<std::string, std::string> env = {}) {
  return {std::move(env), cwd.path(), home.path()};
}

std::map<std::string, std::string> forwardedEnvironment(const Head& h) {
  return settings::forwardedEnvironment(h.env, h.cwd, h.home);
}

// A head on a fake machine (tests/support/fake_facts.h) whose hostfile lists localhost (this
// machine), node-b and node-c; `words` are its launch flags.
struct HeadLaunch {
  TempDir dir;
  accel::test::FakeMachine machine;
  LaunchSettings settings;
  LaunchPlan plan;
  std::vector<FleetMember> members;

  explicit HeadLaunch(std::vector<std::string> words, std::map<std::string, std::string> env = {}) {
    const std::string hostfile = dir.write("hostfile", "localhost slots=2\nnode-b slots=3\nnode-c slots=4\n");
    machine.facts.machine.env = std::move(env);
    machine.facts.machine.env["PWD"] = dir.path();
    machine.facts.machine.env["HOME"] = dir.path();
    machine.network.names = {{"node-b", "10.0.0.2"}, {"node-c", "10.0.0.3"}};
    machine.network.routes = {{"node-b", {"10.0.0.1", "eth0"}}};
    words.insert(words.begin(), {"--hostfile", hostfile, "--rdzv_token", "tok", "--rdzv_id", "run"});
    words.push_back("train.py");
    settings = accel::test::settingsFor(words, machine);
    plan = build(settings, machine.facts);
    members = fleetMembers(plan, settings, machine.facts);
  }
};

}  // namespace

TEST_CASE("fleet: the forwarded environment is DeepSpeed's", "[fleet]") {
  TempDir cwd, home;
  const std::map<std::string, std::string> env = {{"NCCL_DEBUG", "INFO"},
                                                  {"NCCL_SOCKET_IFNAME", "eth0"},
                                                  {"PYTHONUNBUFFERED", "1"},
                                                  {"UCX_TLS", "tcp"},
                                                  {"MV2_USE_CUDA", "1"},
                                                  {"MLFLOW_TRACKING_URI", "http://m"},
                                                  {"ACCEL_JOB_PORT", "29601"},
                                                  {"ACCEL_PTY", "off"},
                                                  {"ACCEL_STORE_TOKEN", "secret"},
                                                  {"ACCEL_SSH_ARGS", "-i key"},
                                                  {"ACCEL_REMOTE_ACCEL", "/opt/accel"},
                                                  {"HOME", "/home/u"},
                                                  {"PATH", "/usr/bin"},
                                                  {"CUDA_VISIBLE_DEVICES", "0,1"},
                                                  {"HF_HOME", "/hf"},
                                                  {"nccl_debug", "lower case"},
                                                  {"XNCCL", "x"},
                                                  {"ACCELERATE_MIXED_PRECISION", "fp16"}};
  const auto out = forwardedEnvironment(facts(cwd, home, env));
  for (const char* name : {"NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "PYTHONUNBUFFERED", "UCX_TLS", "MV2_USE_CUDA",
                           "MLFLOW_TRACKING_URI", "ACCEL_JOB_PORT", "ACCEL_PTY"}) {
    INFO(name);
    REQUIRE(out.count(name) == 1);
    CHECK(out.at(name) == env.at(name));
  }
  for (const char* name : {"ACCEL_STORE_TOKEN", "ACCEL_SSH_ARGS", "ACCEL_REMOTE_ACCEL", "HOME", "PATH",
                           "CUDA_VISIBLE_DEVICES", "HF_HOME", "nccl_debug", "XNCCL", "ACCELERATE_MIXED_PRECISION"}) {
    INFO(name);
    CHECK(out.count(name) == 0);
  }
  CHECK(out.at("PYTHONPATH") == cwd.path());
  CHECK(out.size() == 9);
}

TEST_CASE("fleet: PYTHONPATH has the working directory first", "[fleet]") {
  TempDir cwd, home;
  CHECK(forwardedEnvironment(facts(cwd, home, {{"PYTHONPATH", "/a:/b"}})).at("PYTHONPATH") == cwd.path() + ":/a:/b");
  CHECK(forwardedEnvironment(facts(cwd, home, {{"PYTHONPATH", ""}})).at("PYTHONPATH") == cwd.path());
  CHECK(forwardedEnvironment(facts(cwd, home)).at("PYTHONPATH") == cwd.path());
}

TEST_CASE("fleet: .deepspeed_env from home, then the working directory, later wins", "[fleet]") {
  TempDir cwd, home;
  home.write(".deepspeed_env", "A=from home\nB=from home\nNCCL_DEBUG=WARN\n");
  cwd.write(".deepspeed_env", "\n  \nB=from cwd\r\nC=x=y=z\n\nEMPTY=\n");
  const auto out = forwardedEnvironment(facts(cwd, home, {{"NCCL_DEBUG", "INFO"}, {"UNRELATED", "u"}}));
  CHECK(out.at("A") == "from home");
  CHECK(out.at("B") == "from cwd");  // the working directory's file wins
  CHECK(out.at("C") == "x=y=z");     // split at the first '='
  CHECK(out.at("EMPTY") == "");
  CHECK(out.at("NCCL_DEBUG") == "WARN");  // a file's line wins over the environment
  CHECK(out.count("UNRELATED") == 0);

  SECTION("only one of them") {
    std::filesystem::remove(home.file(".deepspeed_env"));
    const auto only_cwd = forwardedEnvironment(facts(cwd, home));
    CHECK(only_cwd.count("A") == 0);
    CHECK(only_cwd.at("B") == "from cwd");
  }
  SECTION("no home") {
    Head f = facts(cwd, home);
    f.home = "";
    CHECK(forwardedEnvironment(f).count("A") == 0);
  }
}

TEST_CASE("fleet: DS_ENV_FILE names the file", "[fleet]") {
  TempDir cwd, home, elsewhere;
  home.write(".deepspeed_env", "DEFAULT_HOME=1\n");
  cwd.write(".deepspeed_env", "DEFAULT_CWD=1\n");
  home.write("my_env", "MINE=home\nHOME_ONLY=1\n");
  cwd.write("my_env", "MINE=cwd\n");
  const auto named = forwardedEnvironment(facts(cwd, home, {{"DS_ENV_FILE", "my_env"}}));
  CHECK(named.at("MINE") == "cwd");
  CHECK(named.at("HOME_ONLY") == "1");
  CHECK(named.count("DEFAULT_HOME") == 0);
  CHECK(named.count("DEFAULT_CWD") == 0);

  const std::string absolute = elsewhere.write("abs_env", "ABS=1\n");
  const auto abs = forwardedEnvironment(facts(cwd, home, {{"DS_ENV_FILE", absolute}}));
  CHECK(abs.at("ABS") == "1");
  CHECK(abs.count("DEFAULT_HOME") == 0);
  CHECK(abs.count("DEFAULT_CWD") == 0);

  // Set but empty: the default name.
  CHECK(forwardedEnvironment(facts(cwd, home, {{"DS_ENV_FILE", ""}})).at("DEFAULT_CWD") == "1");
  // Named and missing: nothing read, as DeepSpeed skips a file that is not there.
  CHECK(forwardedEnvironment(facts(cwd, home, {{"DS_ENV_FILE", "nope"}})).count("DEFAULT_CWD") == 0);
}

TEST_CASE("fleet: a .deepspeed_env line that is not KEY=VALUE names file:line", "[fleet]") {
  TempDir cwd, home;
  for (const char* bad : {"JUST_A_NAME", "=value", "export"}) {
    INFO(bad);
    cwd.write(".deepspeed_env", std::string("A=1\n\nB=2\n") + bad + "\nC=3\n");
    const auto e = usageError([&] { forwardedEnvironment(facts(cwd, home)); });
    CHECK_THAT(e.what(), Contains(cwd.file(".deepspeed_env") + ":4:") && Contains(bad));
    CHECK_THAT(e.hint(), Contains("KEY=VALUE") || Contains("NCCL_DEBUG=INFO"));
  }
  std::filesystem::remove(cwd.file(".deepspeed_env"));
  home.write(".deepspeed_env", "OK=1\nbroken line\n");
  CHECK_THAT(usageError([&] { forwardedEnvironment(facts(cwd, home)); }).what(),
             Contains(home.file(".deepspeed_env") + ":2:"));
}

TEST_CASE("fleet: this machine runs accel directly, every other host through ssh in batch mode", "[fleet]") {
  HeadLaunch h({"--ssh_port", "2222", "--ssh_args", "-F '/x y/ssh config' -i ~/.ssh/key -o \"ProxyJump=a b\" ~",
                "--include", "localhost@node-b@node-c:1,3"},
               {{"NCCL_DEBUG", "INFO"}});
  REQUIRE(h.plan.kind == LaunchPlan::Kind::Fleet);
  const auto& members = h.members;
  REQUIRE(members.size() == 3);

  CHECK(members[0].host == "localhost");
  CHECK(members[0].local);
  CHECK(members[0].argv == std::vector<std::string>{"/opt/accel/bin/accel", "launch", "--from_head"});

  for (size_t k : {1, 2}) {
    const FleetMember& m = members[k];
    INFO(m.host);
    CHECK_FALSE(m.local);
    REQUIRE(m.argv.size() == 20);  // ssh, its options (the heartbeat's keepalives last), the host, the command
    const std::vector<std::string> head(m.argv.begin(), m.argv.begin() + 12);
    CHECK(head == std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-p", "2222", "-F", "/x y/ssh config", "-i",
                                           h.dir.path() + "/.ssh/key", "-o", "ProxyJump=a b", "~"});
    CHECK(m.argv[m.argv.size() - 2] == m.host);
    CHECK_THAT(m.argv.back(), Contains("/opt/accel/bin/accel") && Contains("launch --from_head"));
  }

  for (size_t k = 0; k < members.size(); ++k) {
    const HeadOrders& o = members[k].orders;
    INFO(k);
    CHECK(members[k].machine_rank == static_cast<int>(k));
    CHECK(o.protocol == job::kProtocolVersion);
    CHECK(o.version == buildInfo().version);
    CHECK(o.place.host == h.settings.hosts.selected[k].host);
    CHECK(o.place.machine_rank == static_cast<int>(k));
    CHECK(o.place.num_machines == 3);
    // localhost is loopback here: the others reach machine 0 where its route towards them leaves.
    CHECK(o.place.main_addr == "10.0.0.1");
    CHECK(o.place.main_port == 29500);
    CHECK(o.place.procs == static_cast<int>(h.settings.hosts.selected[k].slots.size()));
    CHECK(o.place.token == "tok");
    CHECK(o.place.run_id == "run");
    CHECK(o.cwd == h.dir.path());
    CHECK(o.args == h.settings.words);
    CHECK_FALSE(o.config_path);
    CHECK(o.env == h.settings.hosts.forwarded);
    CHECK(o.env.at("NCCL_DEBUG") == "INFO");
  }
  // GPU ids only where the slots are not 0..n-1.
  CHECK(members[0].orders.place.gpu_ids == "");
  CHECK(members[1].orders.place.gpu_ids == "");
  CHECK(members[2].orders.place.gpu_ids == "1,3");
  CHECK_THAT(h.plan.notes.front(), Contains("localhost is 127.0.0.1 here (loopback)") && Contains("10.0.0.1"));
}

TEST_CASE("fleet: slots that are not 0..n-1 become gpu_ids", "[fleet]") {
  HeadLaunch h({"--include", "localhost:1@node-b:0@node-c:0,2"});
  REQUIRE(h.members.size() == 3);
  CHECK(h.members[0].orders.place.gpu_ids == "1");
  CHECK(h.members[1].orders.place.gpu_ids == "");
  CHECK(h.members[2].orders.place.gpu_ids == "0,2");
  CHECK(h.members[2].orders.place.procs == 2);
  HeadLaunch all({});
  CHECK(all.members[2].orders.place.gpu_ids == "");
  CHECK(all.members[2].orders.place.procs == 4);
}

TEST_CASE("fleet: ssh's port and options from the flags or $ACCEL_SSH_ARGS", "[fleet]") {
  TempDir home;
  auto sshOf = [&](const std::optional<long long>& port, const std::optional<std::string>& args,
                   std::map<std::string, std::string> env) {
    auto argv = settings::sshOptions(port, args, env, home.path(), 0);
    argv.insert(argv.begin(), "ssh");
    return argv;
  };
  CHECK(sshOf(std::nullopt, std::nullopt, {}) == std::vector<std::string>{"ssh", "-o", "BatchMode=yes"});
  CHECK(sshOf(std::nullopt, std::string(""), {{"ACCEL_SSH_ARGS", "-v"}}) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes"});  // the flag wins, empty or not
  CHECK(sshOf(22, std::nullopt, {{"ACCEL_SSH_ARGS", "-o StrictHostKeyChecking=no  -v"}}) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-p", "22", "-o", "StrictHostKeyChecking=no", "-v"});
  CHECK(sshOf(std::nullopt, std::string("-l 'user name' -o 'A=\"b c\"' \\ x"), {}) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-l", "user name", "-o", "A=\"b c\"", " x"});

  const auto flag = usageError([&] { sshOf(std::nullopt, std::string("-F '/x y/cfg"), {}); });
  CHECK_THAT(flag.what(), Contains("--ssh_args") && Contains("open quote"));
  const auto env = usageError([&] { sshOf(std::nullopt, std::nullopt, {{"ACCEL_SSH_ARGS", "-o \"A=b"}}); });
  CHECK_THAT(env.what(), Contains("ACCEL_SSH_ARGS") && Contains("open quote"));

  // Without a home, "~/" stays as typed.
  const auto argv = settings::sshOptions(std::nullopt, std::string("-i ~/.ssh/k"), {}, "", 0);
  CHECK(argv[3] == "~/.ssh/k");
  // The heartbeat timeout: ssh gives up on a host silent that long.
  CHECK(settings::sshOptions(std::nullopt, std::nullopt, {}, "", 4.5) ==
        std::vector<std::string>{"-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ServerAliveInterval=1", "-o",
                                 "ServerAliveCountMax=5"});
}

TEST_CASE("fleet: the remote command runs this accel's path, else accel on PATH, else exits 127", "[fleet]") {
  TempDir cwd, home, bin;
  // A stand-in accel at a path a shell must quote, printing its arguments.
  const std::string odd = bin.path() + "/it's an accel";
  std::ofstream(odd) << "#!/bin/sh\necho \"odd: $*\"\n";
  std::filesystem::permissions(odd, std::filesystem::perms::owner_all);
  const std::string on_path = bin.path() + "/accel";
  std::ofstream(on_path) << "#!/bin/sh\necho \"on path: $*\"\n";
  std::filesystem::permissions(on_path, std::filesystem::perms::owner_all);
  auto remote = [&](const std::string& self, std::map<std::string, std::string> env) {
    HeadLaunch h({}, std::move(env));
    h.machine.facts.machine.self = self;
    return fleetMembers(h.plan, h.settings, h.machine.facts)[1].argv.back();
  };
  // No accel on PATH: an empty directory (the shell's builtins suffice).
  const std::map<std::string, std::string> no_path = {{"PATH", cwd.path()}};

  auto r = accel::test::run({"/bin/sh", "-c", remote(odd, {})}, "", no_path);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "odd: launch --from_head\n");

  r = accel::test::run({"/bin/sh", "-c", remote(bin.file("missing"), {})}, "", {{"PATH", bin.path() + ":/bin"}});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "on path: launch --from_head\n");

  r = accel::test::run({"/bin/sh", "-c", remote(bin.file("missing"), {})}, "", no_path);
  CHECK(r.exit_code == 127);
  CHECK_THAT(r.err, Contains("accel: error: no accel on host") && Contains(bin.file("missing")));

  // $ACCEL_REMOTE_ACCEL on the head names the path on the hosts.
  r = accel::test::run({"/bin/sh", "-c", remote(bin.file("missing"), {{"ACCEL_REMOTE_ACCEL", odd}})}, "", no_path);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "odd: launch --from_head\n");
}

// The message's hint names the variable to set on the head; the remote shell must not expand it.
TEST_CASE("fleet: the remote command's hint names $ACCEL_REMOTE_ACCEL", "[fleet]") {
  TempDir cwd;
  HeadLaunch h({});
  h.machine.facts.machine.self = cwd.file("missing");
  const auto command = fleetMembers(h.plan, h.settings, h.machine.facts)[1].argv.back();
  const auto r = accel::test::run({"/bin/sh", "-c", command}, "", {{"PATH", cwd.path()}, {"ACCEL_REMOTE_ACCEL", ""}});
  CHECK(r.exit_code == 127);
  CHECK_THAT(r.err, Contains("accel: hint: install accel there, or name its path in $ACCEL_REMOTE_ACCEL on the head"));
}

// A line that is no JSON object is refused as any wrong orders are: a usage error (exit 2), which
// the head takes as a launcher that could not start.
