// SPDX-License-Identifier: Apache-2.0
// The job's token (--rdzv_token, ACCEL_STORE_TOKEN) is handed to the workers and nowhere else:
// jobs given a known token go through every path that writes — the console, --dry_run,
// --debug, --log_dir files, error files, the stacks files kept after a hang, two machines'
// launchers over the job channel, a hostfile head's orders, the event log (events.jsonl),
// /metrics, the other machines' logs in machine 0's --log_dir, `accel top --json` — and no byte
// of what they wrote holds it. A later path that writes somewhere new adds its job here.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

const std::string kKnownToken = "tok-5e1f0c93a7d24b68";

// env_worker started through a shell that first forgets the token: a worker that keeps its
// secret (env_worker prints every job variable it has).
std::vector<std::string> secretKeeping(std::vector<std::string> args) {
  std::vector<std::string> argv = {"--no_python", "sh", "-c", "unset ACCEL_STORE_TOKEN; exec \"$0\" \"$@\"",
                                   envWorker()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<std::string> launchOf(std::vector<std::string> flags, const std::vector<std::string>& program) {
  flags.insert(flags.begin(), {accelBinary(), "launch", "--rdzv_token", kKnownToken});
  flags.insert(flags.end(), program.begin(), program.end());
  return flags;
}

// Every file under `root` that holds the token.
std::vector<std::string> filesHolding(const std::string& root) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && contains(slurp(entry.path().string()), kKnownToken)) found.push_back(entry.path());
  }
  return found;
}

}  // namespace

TEST_CASE("token: no console line, dry run, log, error file, stacks file or order holds the job's token",
          "[launch][token]") {
  TempDir dir;
  const auto env = hermeticEnv(dir, {{"GLOO_SOCKET_IFNAME", "lo"}});
  std::vector<RunResult> runs;
  auto dry = run(launchOf({"--dry_run", "--debug", "--cpu", "--num_processes", "2"}, {envWorker()}), {}, env);
  CHECK(dry.exit_code == 0);
  CHECK(contains(dry.out, "  ACCEL_STORE_TOKEN=(set, not shown)\n"));
  CHECK(contains(dry.err, "(set, not shown)"));  // --debug's rdzv_token row
  runs.push_back(dry);

  // A failure: the summary, the worker's error file (TORCHELASTIC_ERROR_FILE), --log_dir.
  auto failed =
      run(launchOf({"--cpu", "--num_processes", "2", "--main_process_port", "0", "--log_dir", dir.file("logs")},
                   secretKeeping({"--fail-rank", "1", "--record-error", "boom", "--exit-code", "3"})),
          {}, env, 60000);
  CHECK(failed.exit_code == 3);
  CHECK(contains(failed.err, "boom"));
  runs.push_back(failed);

  // Two machines' launchers over the job channel, then a hostfile head's orders to two local hosts.
  JobPorts ports;
  auto machine = [&](int rank) {
    return launchOf({"--cpu", "--num_machines", "2", "--machine_rank", std::to_string(rank), "--num_processes", "2",
                     "--main_process_ip", "127.0.0.1", "--main_process_port", std::to_string(ports.port), "--job_port",
                     std::to_string(ports.job_port)},
                    secretKeeping({}));
  };
  BackgroundProcess zero(machine(0), env);
  auto one = run(machine(1), {}, env, 60000);
  CHECK(one.exit_code == 0);
  auto zero_done = zero.wait(60000);
  CHECK(zero_done.exit_code == 0);
  runs.push_back(one);
  runs.push_back(zero_done);
  const auto hosts = dir.write("hosts", "localhost slots=1\n127.0.0.1 slots=1\n");
  auto head = run(launchOf({"--hostfile", hosts, "--main_process_port", std::to_string(freeLoopbackPort()),
                            "--job_port", std::to_string(freeLoopbackPort())},
                           secretKeeping({})),
                  {}, env, 60000);
  CHECK(head.exit_code == 0);
  runs.push_back(head);

  // A hang: every rank's stacks, kept in a file after the stop (gdb reads them where installed).
  auto hung = run(launchOf({"--cpu", "--num_processes", "2", "--main_process_port", "0", "--hang_timeout", "2",
                            "--collective_timeout", "120", "--grace_period", "2"},
                           {runtimeWorker(), "spin", "1"}),
                  {}, env, 60000);
  CHECK(hung.exit_code == 1);
  CHECK(contains(hung.err, "where each rank was before the stop"));
  runs.push_back(hung);

  for (const auto& r : runs) {
    INFO(r.out << r.err);
    CHECK_FALSE(contains(r.out, kKnownToken));
    CHECK_FALSE(contains(r.err, kKnownToken));
  }
  CHECK(filesHolding(dir.path()) == std::vector<std::string>{});
}

TEST_CASE("token: the event log, /metrics, the forwarded logs and accel top --json hold no token",
          "[launch][token][machines]") {
  TempDir dir;
  const auto env = hermeticEnv(dir, {{"GLOO_SOCKET_IFNAME", "lo"}});
  JobPorts ports;
  const int metrics = freeLoopbackPort();
  auto machine = [&](int rank) {
    return launchOf({"--cpu",
                     "--num_machines",
                     "2",
                     "--machine_rank",
                     std::to_string(rank),
                     "--num_processes",
                     "4",
                     "--main_process_ip",
                     "127.0.0.1",
                     "--main_process_port",
                     std::to_string(ports.port),
                     "--job_port",
                     std::to_string(ports.job_port),
                     "--log_dir",
                     dir.file("logs" + std::to_string(rank)),
                     "--event-log-handler",
                     "console",
                     "--metrics_port",
                     std::to_string(metrics),
                     "--metrics_addr",
                     rank == 0 ? "127.0.0.1" : "127.0.0.2"},
                    secretKeeping({"--sleep", "4"}));
  };
  BackgroundProcess zero(machine(0), env);
  BackgroundProcess one(machine(1), env);
  REQUIRE(zero.waitForOutput("env RANK=", 2));
  REQUIRE(one.waitForOutput("env RANK=", 2));
  std::vector<RunResult> runs;
  runs.push_back(run({accelBinary(), "top", "--json", std::to_string(one.pid())}, {}, env, 60000));
  CHECK(runs.back().exit_code == 0);
  CHECK(contains(runs.back().out, "\"world_size\":4"));
  for (const char* address : {"127.0.0.1", "127.0.0.2"}) {
    runs.push_back(run({"bash", "-c",
                        std::string("exec 3<>/dev/tcp/") + address + "/" + std::to_string(metrics) +
                            "; printf 'GET /metrics HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3"},
                       {}, env, 30000));
    CHECK(contains(runs.back().out, "accel_rank_up{"));
  }
  runs.push_back(zero.wait(60000));
  runs.push_back(one.wait(60000));
  CHECK(runs[runs.size() - 2].exit_code == 0);
  CHECK(runs.back().exit_code == 0);
  for (const auto& r : runs) {
    INFO(r.out << r.err);
    CHECK_FALSE(contains(r.out, kKnownToken));
    CHECK_FALSE(contains(r.err, kKnownToken));
  }
  CHECK(filesHolding(dir.path()) == std::vector<std::string>{});
  // The files that were searched exist: the event log, and machine 1's logs in machine 0's folder.
  int events = 0, forwarded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("logs0"))) {
    events += entry.path().filename() == "events.jsonl";
    forwarded += contains(entry.path().string(), "/machine_1_") && entry.path().filename() == "stdout.log";
  }
  CHECK(events == 1);
  CHECK(forwarded == 2);
}
