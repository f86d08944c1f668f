// SPDX-License-Identifier: Apache-2.0
// `accel launch --hostfile` through the real binary: the plans --dry_run prints (which hosts, how
// many processes, the ssh command of each remote host), every wrong input refused with exit 2 and
// a message naming where it is wrong before anything starts, Accelerate's DeepSpeed settings
// (deepspeed_multinode_launcher, deepspeed_hostfile), and real runs whose "machines" are all this
// one (localhost and 127.0.0.1: no ssh). Across real hosts over a real sshd is tests/cluster.
// Remote hosts are TEST-NET-3 addresses (RFC 5737): no name to resolve, never this machine's.
#include <signal.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "lib/common/strings.h"
#include "tests/cli/launch_support.h"

using namespace accel::test;

namespace {

// A working directory of its own (where .deepspeed_env is read and the workers start) and a home
// of its own (~/.deepspeed_env); no ssh settings of the user's.
RunResult hostLaunch(const TempDir& dir, std::vector<std::string> args, int gpus = 0,
                     std::map<std::string, std::string> extra = {}) {
  std::filesystem::create_directories(dir.file("home"));
  std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.path(), accelBinary(), "launch"};
  argv.insert(argv.end(), args.begin(), args.end());
  extra.emplace("HOME", dir.file("home"));
  extra.emplace("ACCEL_SSH_ARGS", "");
  extra.emplace("ACCEL_REMOTE_ACCEL", "");
  extra.emplace("DS_ENV_FILE", "");
  return run(argv, {}, launchEnv(dir, gpus, std::move(extra)), 90000);
}

// A program that leaves a trace when it starts: "nothing started" is that file's absence.
std::vector<std::string> traced(const TempDir& dir) {
  return {"--no_python", envWorker(), "--pidfile", dir.file("started")};
}

bool started(const TempDir& dir) { return std::filesystem::exists(dir.file("started")); }

// Usage error: exit 2, `where` and `what` on stderr, no plan, nothing started.
void checkRefused(const TempDir& dir, const RunResult& r, const std::vector<std::string>& parts) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "accel: error: "));
  for (const auto& part : parts) CHECK(contains(r.err, part));
  CHECK_FALSE(contains(r.out, "plan"));
  CHECK_FALSE(started(dir));
}

// `args` + --dry_run on the CPU with a traced program.
RunResult dryRun(const TempDir& dir, std::vector<std::string> args, std::map<std::string, std::string> extra = {}) {
  args.insert(args.end(), {"--cpu", "--dry_run"});
  const auto program = traced(dir);
  args.insert(args.end(), program.begin(), program.end());
  return hostLaunch(dir, args, 0, std::move(extra));
}

// `args` without --dry_run: a refusal must leave nothing started.
RunResult realRun(const TempDir& dir, std::vector<std::string> args, std::map<std::string, std::string> extra = {}) {
  args.push_back("--cpu");
  const auto program = traced(dir);
  args.insert(args.end(), program.begin(), program.end());
  return hostLaunch(dir, args, 0, std::move(extra));
}

std::string self() { return std::filesystem::canonical(accelBinary()).string(); }

// An Accelerate config: DeepSpeed on two machines, the launcher and more deepspeed_config lines.
std::string deepspeedConfig(const TempDir& dir, const std::string& launcher, int machine_rank,
                            const std::string& more = "") {
  return dir.write("ds.yaml",
                   "compute_environment: LOCAL_MACHINE\n"
                   "distributed_type: DEEPSPEED\n"
                   "deepspeed_config:\n"
                   "  deepspeed_multinode_launcher: " +
                       launcher + "\n  zero_stage: 2\n" + more + "machine_rank: " + std::to_string(machine_rank) +
                       "\n"
                       "main_process_ip: 127.0.0.1\n"
                       "main_process_port: 29555\n"
                       "main_training_function: main\n"
                       "mixed_precision: 'no'\n"
                       "num_machines: 2\n"
                       "num_processes: 4\n"
                       "use_cpu: false\n");
}

}  // namespace

TEST_CASE("hostfile launch: wrong hostfiles are named file:line, and nothing starts", "[launch][hostfile][fleet]") {
  TempDir dir;
  SECTION("a host listed twice") {
    const auto hf = dir.write("hosts", "localhost slots=1\n127.0.0.1 slots=1\nlocalhost slots=2\n");
    checkRefused(dir, dryRun(dir, {"--hostfile", hf}), {hf + ":3: host 'localhost' is listed twice (lines 1 and 3)"});
    checkRefused(dir, realRun(dir, {"--hostfile", hf}), {hf + ":3:"});
  }
  SECTION("slots=0") {
    const auto hf = dir.write("hosts", "# two machines\nlocalhost slots=0\n");
    checkRefused(dir, dryRun(dir, {"--hostfile", hf}), {hf + ":2: slots of host 'localhost'", "out of range"});
  }
  SECTION("a malformed line") {
    const auto hf = dir.write("hosts", "localhost slots=1\n127.0.0.1 slots=1 203.0.113.1 slots=1\n");
    checkRefused(dir, dryRun(dir, {"--hostfile", hf}), {hf + ":2: cannot read '127.0.0.1 slots=1", "HOST slots=N"});
    checkRefused(dir, realRun(dir, {"--hostfile", hf}), {hf + ":2:"});
  }
  SECTION("no hosts") {
    const auto hf = dir.write("hosts", "# nothing\n\n");
    checkRefused(dir, dryRun(dir, {"--hostfile", hf}), {hf + ": the hostfile lists no hosts"});
  }
  SECTION("a hostfile that does not exist") {
    checkRefused(dir, dryRun(dir, {"--hostfile", dir.file("nope")}),
                 {"--hostfile '" + dir.file("nope") + "'", "no such file"});
    checkRefused(dir, realRun(dir, {"--hostfile", dir.file("nope")}), {"no such file"});
  }
  SECTION("a hostfile that is a directory") {
    checkRefused(dir, dryRun(dir, {"--hostfile", dir.path()}), {"--hostfile '" + dir.path() + "'", "is a directory"});
  }
}

TEST_CASE("hostfile launch: Accelerate's --deepspeed_hostfile on one machine is ignored, as Accelerate does",
          "[launch][hostfile][fleet]") {
  TempDir dir;
  const auto r = hostLaunch(
      dir,
      {"--use_deepspeed", "--num_processes", "2", "--deepspeed_hostfile", "/dev/null", "--deepspeed_exclusion_filter",
       "host9", "--deepspeed_multinode_launcher", "pdsh", "--dry_run", "--no_python", "/bin/true"},
      2);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "accel launch plan: 2 worker(s) on machine 0 of 1"));
}

TEST_CASE("hostfile launch: wrong filters and limits are named by their flag", "[launch][hostfile][fleet]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=2\n127.0.0.1 slots=1\n");
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--include", "nohost"}),
               {"--include 'nohost': host 'nohost' is not in the hostfile", "localhost (slots 0-1)"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--exclude", "localhost@elsewhere:0"}),
               {"--exclude 'localhost@elsewhere:0': host 'elsewhere' is not in the hostfile"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--include", "localhost:0,5"}),
               {"--include 'localhost:0,5': host 'localhost' has no slot 5", "slots 0-1 (hostfile line 1)"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--exclude", "127.0.0.1:1"}),
               {"--exclude '127.0.0.1:1': host '127.0.0.1' has no slot 1"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--include", "localhost", "--exclude", "127.0.0.1"}),
               {"--include 'localhost' and --exclude '127.0.0.1' cannot both be given"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--include", "localhost", "--num_gpus", "1"}),
               {"--num_gpus cannot be given with --include"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--exclude", "localhost@127.0.0.1"}),
               {"--exclude 'localhost@127.0.0.1': no host is left to run on"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--num_nodes", "3"}),
               {"--num_nodes 3: the hostfile has only 2 hosts"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--num_nodes", "0"}), {"--num_nodes", "'0'"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--num_processes", "4"}),
               {"--num_processes 4 and the hostfile's selection (" + hf + ": localhost 2, 127.0.0.1 1) disagree"});
  checkRefused(dir, realRun(dir, {"--hostfile", hf, "--num_processes", "2"}), {"--num_processes 2"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--num_machines", "2", "--num_nodes", "1"}),
               {"--num_machines 2 and --num_nodes 1 disagree"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--num_machines", "3"}),
               {"--num_machines 3: the hostfile has only 2 hosts"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--include", "localhost", "--num_machines", "2"}),
               {"--num_machines 2 and the hostfile's selection (1 host(s) of " + hf + ") disagree"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--nnodes", "2", "--num_machines", "1"}),
               {"--num_machines 1 and --nnodes 2 disagree"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--nproc_per_node", "1", "--num_gpus", "2"}),
               {"--nproc_per_node 1 and --num_gpus 2 disagree"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--gpu_ids", "1"}), {"--gpu_ids 1 and the hostfile"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--main_process_port", "0"}),
               {"main_process_port 0 (pick a free port) cannot work across machines"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--mpirun_hostfile", hf}),
               {"--hostfile " + hf + " and mpirun_hostfile " + hf + " (command line) both name the hosts"});
  const auto remote = dir.write("remote", "localhost slots=1\n203.0.113.7 slots=1\n");
  checkRefused(dir, dryRun(dir, {"--hostfile", remote, "--main_process_ip", "127.0.0.1"}),
               {"the main address 127.0.0.1 (127.0.0.1) is a loopback address, which 203.0.113.7 cannot reach"});
}

TEST_CASE("hostfile launch: ssh options with an open quote, and a .deepspeed_env line that is not KEY=VALUE",
          "[launch][hostfile][fleet]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=1\n203.0.113.9 slots=1\n");
  checkRefused(dir, dryRun(dir, {"--hostfile", hf, "--ssh_args", "-F '/x y/cfg"}), {"--ssh_args", "open quote"});
  checkRefused(dir, dryRun(dir, {"--hostfile", hf}, {{"ACCEL_SSH_ARGS", "-o \"A=b"}}),
               {"ACCEL_SSH_ARGS", "open quote"});
  const auto local = dir.write("local", "localhost slots=1\n127.0.0.1 slots=1\n");
  checkRefused(dir, realRun(dir, {"--hostfile", local, "--ssh_args", "-i 'key"}), {"--ssh_args", "open quote"});

  dir.write(".deepspeed_env", "NCCL_DEBUG=INFO\n\nnot a variable\n");
  checkRefused(dir, dryRun(dir, {"--hostfile", local}), {dir.file(".deepspeed_env") + ":3:"});
  checkRefused(dir, realRun(dir, {"--hostfile", local}), {dir.file(".deepspeed_env") + ":3:"});
}

TEST_CASE("hostfile launch: hosts that are this machine start without ssh", "[launch][hostfile][fleet]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=2\n127.0.0.1 slots=1\n");
  const auto r = dryRun(dir, {"--hostfile", hf, "--main_process_port", "29777"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "accel launch plan: 2 machine(s) from " + hf +
                            " (--hostfile), 3 process(es), launcher ssh "
                            "(--hostfile), main_process_ip=localhost main_process_port=29777\n"));
  CHECK(contains(r.out,
                 "machine 0: localhost, 2 process(es) (this machine, no ssh)\n  " + self() + " launch --from_head\n"));
  CHECK(contains(r.out,
                 "machine 1: 127.0.0.1, 1 process(es) (this machine, no ssh)\n  " + self() + " launch --from_head\n"));
  CHECK_FALSE(contains(r.out, "ssh -o"));
  CHECK(contains(r.out, "forwarded to every host: "));
  CHECK(contains(r.out, " PYTHONPATH"));
  CHECK_FALSE(contains(r.err, "note: "));
  // ssh settings given for a hostfile whose hosts are all this machine: said, not silently dropped.
  const auto ssh = dryRun(dir, {"--hostfile", hf, "--main_process_port", "29777", "--ssh_port", "2222"},
                          {{"ACCEL_SSH_ARGS", "-o ConnectTimeout=5"}});
  INFO(ssh.out << ssh.err);
  REQUIRE(ssh.exit_code == 0);
  CHECK(contains(ssh.out,
                 "machine 1: 127.0.0.1, 1 process(es) (this machine, no ssh: --ssh_port 2222 and "
                 "ACCEL_SSH_ARGS not used)\n"));
  CHECK(contains(ssh.err,
                 "note: every host is this machine: their launchers start without ssh, so --ssh_port 2222 "
                 "and ACCEL_SSH_ARGS do not apply"));
  CHECK_FALSE(started(dir));
}

TEST_CASE("hostfile launch: a remote host's ssh command: batch mode, the port, the ssh options as a shell splits them",
          "[launch][hostfile][fleet]") {
  TempDir dir;
  // Machine 0 by an address the remote host could reach: the loopback name localhost would be refused.
  const auto hf = dir.write("hosts", "localhost slots=1\n203.0.113.7 slots=2\n");
  // The command line of machine 1 in a plan: `ssh -o BatchMode=yes [-p PORT] [SSH_ARGS...] ... HOST COMMAND`.
  auto sshLine = [](const RunResult& r) {
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    const std::string machine = "machine 1: 203.0.113.7, 2 process(es)\n  ";
    const size_t at = r.out.find(machine);
    if (at == std::string::npos) return std::string();
    const size_t from = at + machine.size();
    return r.out.substr(from, r.out.find('\n', from) - from);
  };
  const std::string remote = " 203.0.113.7 'p=" + self() + "; ";

  auto r = dryRun(dir, {"--main_process_ip", "203.0.113.9", "--hostfile", hf, "--ssh_port", "2200", "--ssh_args",
                        "-F '/x y/cfg' -i ~/.ssh/k"});
  CHECK(contains(r.out,
                 "machine 0: localhost, 1 process(es) (this machine, no ssh)\n  " + self() + " launch --from_head\n"));
  std::string line = sshLine(r);
  INFO(line);
  CHECK(accel::startsWith(line, "ssh -o BatchMode=yes -p 2200 -F '/x y/cfg' -i " + dir.file("home") + "/.ssh/k "));
  CHECK(contains(line, remote));
  CHECK(accel::endsWith(line, " launch --from_head'"));

  // $ACCEL_SSH_ARGS when --ssh_args is not given; no -p without --ssh_port.
  line = sshLine(dryRun(dir, {"--main_process_ip", "203.0.113.9", "--hostfile", hf},
                        {{"ACCEL_SSH_ARGS", "-o ConnectTimeout=5 -o 'User=a b'"}}));
  CHECK(accel::startsWith(line, "ssh -o BatchMode=yes -o ConnectTimeout=5 -o 'User=a b' "));
  CHECK_FALSE(contains(line, " -p "));
  CHECK(contains(line, remote));
  // --ssh_args wins over it.
  line = sshLine(dryRun(dir, {"--main_process_ip", "203.0.113.9", "--hostfile", hf, "--ssh_args", "-v"},
                        {{"ACCEL_SSH_ARGS", "-o ConnectTimeout=5"}}));
  CHECK(accel::startsWith(line, "ssh -o BatchMode=yes -v -o ConnectTimeout=30 "));
  CHECK_FALSE(contains(line, "ConnectTimeout=5"));
  // $ACCEL_REMOTE_ACCEL names the accel on the hosts; it is the head's, not forwarded.
  r = dryRun(dir, {"--main_process_ip", "203.0.113.9", "--hostfile", hf},
             {{"ACCEL_REMOTE_ACCEL", "/opt/accel/bin/accel"}});
  line = sshLine(r);
  CHECK(accel::startsWith(line, "ssh -o BatchMode=yes "));
  CHECK(contains(line, " 203.0.113.7 'p=/opt/accel/bin/accel; "));
  const auto forwarded = r.out.substr(r.out.find("forwarded to every host: "));
  CHECK_FALSE(contains(forwarded.substr(0, forwarded.find('\n')), "ACCEL_REMOTE_ACCEL"));
  CHECK_FALSE(started(dir));
}

TEST_CASE("hostfile launch: Accelerate's DeepSpeed config on two machines: pdsh needs a hostfile and machine 0",
          "[launch][hostfile][fleet]") {
  TempDir dir;
  SECTION("pdsh without a hostfile") {
    if (std::filesystem::exists("/job/hostfile")) {
      WARN("/job/hostfile exists here: DeepSpeed's default hostfile is used");
      return;
    }
    const auto config = deepspeedConfig(dir, "pdsh", 0);
    const std::vector<std::string> parts = {
        "pdsh (deepspeed_config.deepspeed_multinode_launcher (config file)) starts every machine from a hostfile",
        "/job/hostfile does not exist", "give --hostfile FILE", "nossh"};
    checkRefused(dir, hostLaunch(dir, {"--config_file", config, "--dry_run", "train.py"}, 2), parts);
    const auto program = traced(dir);
    std::vector<std::string> args = {"--config_file", config};
    args.insert(args.end(), program.begin(), program.end());
    checkRefused(dir, hostLaunch(dir, args, 2), parts);
  }
  SECTION("pdsh on machine 1") {
    const auto hf = dir.write("hosts", "localhost slots=2\n127.0.0.1 slots=2\n");
    const auto config = deepspeedConfig(dir, "pdsh", 1, "  deepspeed_hostfile: " + hf + "\n");
    checkRefused(dir, hostLaunch(dir, {"--config_file", config, "--dry_run", "train.py"}, 2),
                 {"starts every machine from machine 0, but this is machine_rank 1 (config file)",
                  "run accel launch on machine 0 only", "nossh"});
  }
}

TEST_CASE(
    "hostfile launch: Accelerate's DeepSpeed config with pdsh and deepspeed_hostfile is a fleet, with nossh one "
    "machine's share",
    "[launch][hostfile][fleet]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=2\n127.0.0.1 slots=2\n");
  SECTION("pdsh") {
    const auto config = deepspeedConfig(dir, "pdsh", 0, "  deepspeed_hostfile: " + hf + "\n");
    const auto r = hostLaunch(dir, {"--config_file", config, "--dry_run", "train.py"}, 2);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "accel launch plan: 2 machine(s) from " + hf +
                              " (deepspeed_config.deepspeed_hostfile (config file)), 4 process(es), launcher pdsh "
                              "(deepspeed_config.deepspeed_multinode_launcher (config file)), "
                              "main_process_ip=127.0.0.1 main_process_port=29555\n"));
    CHECK(contains(r.out, "machine 0: localhost, 2 process(es) (this machine, no ssh)\n"));
    CHECK(contains(r.out, "machine 1: 127.0.0.1, 2 process(es) (this machine, no ssh)\n"));
  }
  SECTION("pdsh with the config's inclusion filter") {
    const auto config = deepspeedConfig(
        dir, "pdsh", 0, "  deepspeed_hostfile: " + hf + "\n  deepspeed_inclusion_filter: localhost@127.0.0.1:1\n");
    const auto r = hostLaunch(dir, {"--config_file", config, "--dry_run", "train.py"}, 2);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "accel launch plan: 2 machine(s) from " + hf));
    CHECK(contains(r.out, "machine 1: 127.0.0.1, 1 process(es), GPUs 1 (this machine, no ssh)\n"));
  }
  SECTION("nossh") {
    dir.write("train.py", "print('hi')\n");  // one machine's plan checks the script
    const auto config = deepspeedConfig(dir, "nossh", 0, "  deepspeed_hostfile: " + hf + "\n");
    const auto r = hostLaunch(dir, {"--config_file", config, "--dry_run", "train.py"}, 2);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "accel launch plan: 2 worker(s) on machine 0 of 2, world size 4"));
    CHECK_FALSE(contains(r.out, "machines from"));
    CHECK(contains(r.err,
                   "note: nossh (deepspeed_config.deepspeed_multinode_launcher (config file)): one launcher "
                   "per machine, " +
                       hf + " unused"));
  }
}

TEST_CASE("hostfile launch: two machines that are this one run a job: ranks labelled by host, .deepspeed_env forwarded",
          "[launch][hostfile][fleet]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=2\n127.0.0.1 slots=1\n");
  dir.write(".deepspeed_env", "DS_TEST_VAR=from deepspeed_env\n");
  const auto r = hostLaunch(dir, {"--hostfile", hf, "--cpu", "--main_process_port", std::to_string(freeLoopbackPort()),
                                  "--job_port", std::to_string(freeLoopbackPort()), "--no_python", "/bin/sh", "-c",
                                  "echo \"rank=$RANK world=$WORLD_SIZE var=$DS_TEST_VAR cwd=$(pwd -P)\""});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const std::string cwd = std::filesystem::canonical(dir.path()).string();
  CHECK(contains(r.out, "[localhost:rank 0] rank=0 world=3 var=from deepspeed_env cwd=" + cwd + "\n"));
  CHECK(contains(r.out, "[localhost:rank 1] rank=1 world=3 var=from deepspeed_env cwd=" + cwd + "\n"));
  CHECK(contains(r.out, "[127.0.0.1:rank 2] rank=2 world=3 var=from deepspeed_env cwd=" + cwd + "\n"));
  CHECK(occurrences(r.out, "rank=") == 3);
  CHECK(contains(r.err, "accel: starting 2 machine(s): localhost (2 processes, here), 127.0.0.1 (1 process, here)"));
}

TEST_CASE("hostfile launch: a rank failing on machine 1 ends the job with its exit code",
          "[launch][hostfile][fleet][failure]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=1\n127.0.0.1 slots=1\n");
  const auto start = std::chrono::steady_clock::now();
  const auto r = hostLaunch(dir, {"--hostfile", hf, "--cpu", "--main_process_port", std::to_string(freeLoopbackPort()),
                                  "--job_port", std::to_string(freeLoopbackPort()), "--grace_period", "2",
                                  "--no_python", envWorker(), "--fail-rank", "1", "--exit-code", "7", "--sleep", "60"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 7);
  CHECK(secondsSince(start) < 40);
  CHECK(contains(r.err, "rank 1 on machine 1 (127.0.0.1) exited with code 7"));
  CHECK(contains(r.err, "accel: [localhost] "));  // each launcher's lines name its host
  CHECK(contains(r.err, "accel: [127.0.0.1] "));
  // One console: the failure is told once, by the machine it happened on.
  CHECK(occurrences(r.err, "it failed first") == 1);
  CHECK(occurrences(r.err, "error: rank 1 on machine 1") == 1);
}

TEST_CASE("hostfile launch: a worker's own exit code 255 or 2 is the job's, not a host that could not start",
          "[launch][hostfile][fleet][failure]") {
  for (const char* code : {"255", "2"}) {
    TempDir dir;
    const auto hf = dir.write("hosts", "localhost slots=1\n127.0.0.1 slots=1\n");
    const auto r =
        hostLaunch(dir, {"--hostfile", hf, "--cpu", "--main_process_port", std::to_string(freeLoopbackPort()),
                         "--job_port", std::to_string(freeLoopbackPort()), "--grace_period", "2", "--no_python",
                         envWorker(), "--fail-rank", "1", "--exit-code", code, "--sleep", "60"});
    INFO(code << "\n" << r.out << r.err);
    CHECK(r.exit_code == std::stoi(code));
    CHECK(contains(r.err, std::string("rank 1 on machine 1 (127.0.0.1) exited with code ") + code));
    CHECK_FALSE(contains(r.err, "ssh to"));
  }
}

TEST_CASE("hostfile launch: SIGUSR1 to the head reaches every machine's workers, and the job goes on",
          "[launch][hostfile][fleet]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("home"));
  const auto hf = dir.write("hosts", "localhost slots=1\n127.0.0.1 slots=1\n");
  BackgroundProcess head(
      {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.path(), accelBinary(), "launch", "--hostfile", hf, "--cpu",
       "--main_process_port", std::to_string(freeLoopbackPort()), "--job_port", std::to_string(freeLoopbackPort()),
       "--no_python", "/bin/sh", "-c",
       "trap 'echo \"usr1 on rank $RANK\"; exit 0' USR1; echo \"up $RANK\"; while :; do sleep 0.05; done"},
      launchEnv(dir, 0, {{"HOME", dir.file("home")}, {"ACCEL_SSH_ARGS", ""}, {"DS_ENV_FILE", ""}}));
  REQUIRE(head.waitForOutput("] up ", 2));
  head.signal(SIGUSR1);
  const auto r = head.wait(30000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "[localhost:rank 0] usr1 on rank 0"));
  CHECK(contains(r.out, "[127.0.0.1:rank 1] usr1 on rank 1"));
}
