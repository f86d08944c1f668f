// SPDX-License-Identifier: Apache-2.0
// Every machine's logs in one place (lib/launch/supervise/log_forwarder.h, log_collector.h)
// through real launchers on loopback: a 3-machine job's rank files all in machine 0's --log_dir,
// byte for byte, its ranks writing steadily above the rate docs/watch.md promises to keep whole;
// a flooding rank finishes, the bytes not sent stated on its machine and marked in machine 0's
// copy, which with the marks adds up to the whole;
// machine 0 unable to write (its files' size limit) says so once and the job ends as it would;
// torchrun's duplicate filters' copies.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

std::vector<std::string> logsMachine(const JobPorts& ports, int machine, int machines, const std::string& logs,
                                     const std::string& script) {
  return machineLaunch(
      {"--cpu", "--num_machines", std::to_string(machines), "--machine_rank", std::to_string(machine),
       "--num_processes", std::to_string(2 * machines), "--main_process_ip", "127.0.0.1", "--main_process_port",
       std::to_string(ports.port), "--job_port", std::to_string(ports.job_port), "--log_dir", logs, "--tee", "0"},
      {}, {"--no_python", "sh", "-c", script});
}

// The one run folder --log_dir made under `logs`.
std::string runFolder(const std::string& logs) {
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(logs)) dirs.push_back(e.path().string());
  REQUIRE(dirs.size() == 1);
  return dirs[0];
}

// The folder machine `m`'s files have in machine 0's run folder.
std::string copyOf(const std::string& run0, int m) {
  for (const auto& e : std::filesystem::directory_iterator(run0)) {
    if (e.path().filename().string().rfind(fmt::format("machine_{}_", m), 0) == 0) return e.path().string();
  }
  FAIL("no folder for machine " << m << " in " << run0);
  return "";
}

// Runs machines 1.. in the background and machine 0 here; every launcher's result.
std::vector<RunResult> runMachines(const TempDir& dir, int machines, const std::string& script,
                                   const std::vector<std::string>& machine0_wrapper = {}) {
  JobPorts ports;
  std::vector<std::unique_ptr<BackgroundProcess>> others;
  for (int m = 1; m < machines; ++m) {
    others.push_back(std::make_unique<BackgroundProcess>(
        logsMachine(ports, m, machines, dir.file("logs" + std::to_string(m)), script), hermeticEnv(dir)));
  }
  auto argv = logsMachine(ports, 0, machines, dir.file("logs0"), script);
  argv.insert(argv.begin(), machine0_wrapper.begin(), machine0_wrapper.end());
  std::vector<RunResult> results = {run(argv, {}, hermeticEnv(dir), 120000)};
  for (auto& p : others) results.push_back(p->wait(60000));
  return results;
}

}  // namespace

TEST_CASE("machine logs: a 3-machine job's rank files all in machine 0's --log_dir, byte for byte",
          "[launch][machines][logs]") {
  TempDir dir;
  // Known lines on both streams, then random text, a little at a time for a second and a half.
  const std::string script =
      "for i in $(seq 1 200); do echo \"rank $RANK line $i\"; echo \"rank $RANK err $i\" >&2; done; "
      "for i in $(seq 1 15); do head -c 100000 /dev/urandom | base64 -w 100; sleep 0.1; done; echo end";
  const auto r = runMachines(dir, 3, script);
  for (const auto& m : r) {
    INFO(m.err);
    REQUIRE(m.exit_code == 0);
    CHECK_FALSE(contains(m.err, "not sent"));
  }
  const std::string run0 = runFolder(dir.file("logs0"));
  for (int m = 1; m < 3; ++m) {
    const std::string own = runFolder(dir.file("logs" + std::to_string(m)));
    const std::string copy = copyOf(run0, m);
    for (int local = 0; local < 2; ++local) {
      for (const char* stream : {"stdout.log", "stderr.log"}) {
        const std::string rel = fmt::format("/attempt_0/{}/{}", local, stream);
        const std::string mine = slurp(own + rel);
        INFO(copy + rel);
        CHECK(mine.size() > (std::string(stream) == "stdout.log" ? 2'000'000u : 2000u));
        CHECK(slurp(copy + rel) == mine);
      }
    }
  }
}

// A scenario (the normal build only): hundreds of megabytes through the sanitizers' launcher
// would take a minute and test nothing more.
TEST_CASE("machine logs: a flooding rank finishes, and what was not sent is stated and marked",
          "[launch][machines][logs][scenario]") {
  TempDir dir;
  const std::string script =
      "if [ $RANK = 2 ]; then yes 'flood line 0123456789 abcdefghijklmnopqrstuvwxyz' | head -c 300000000; fi; "
      "echo done";
  const auto r = runMachines(dir, 2, script);
  INFO(r[0].err << r[1].err);
  REQUIRE(r[0].exit_code == 0);
  REQUIRE(r[1].exit_code == 0);
  const std::regex stated(R"(local rank 0's stdout: (\d+) bytes were not sent to machine 0's --log_dir)");
  std::smatch m;
  REQUIRE(std::regex_search(r[1].err, m, stated));
  const long long stated_bytes = std::stoll(m[1]);
  CHECK(stated_bytes > 0);
  CHECK(occurrences(r[1].err, "warning: the job channel falls behind this machine's logs") == 1);
  // Machine 0's copy: what came, and a mark where bytes were dropped; together the whole stream.
  const std::string copy = slurp(copyOf(runFolder(dir.file("logs0")), 1) + "/attempt_0/0/stdout.log");
  const std::regex mark(R"(\n\[accel: (\d+) bytes of this stream were not sent here: [^\]]*\]\n)");
  long long marked = 0;
  size_t mark_bytes = 0;
  for (auto it = std::sregex_iterator(copy.begin(), copy.end(), mark); it != std::sregex_iterator(); ++it) {
    marked += std::stoll((*it)[1]);
    mark_bytes += static_cast<size_t>((*it)[0].length());
  }
  CHECK(marked == stated_bytes);
  CHECK(static_cast<long long>(copy.size() - mark_bytes) + marked == 300000000LL + 5);  // the flood and "done\n"
}

TEST_CASE("machine logs: machine 0 unable to write them says so once, and the job ends as it would",
          "[launch][machines][logs]") {
  TempDir dir;
  const std::string script = "if [ $RANK = 3 ]; then head -c 3000000 /dev/zero | tr '\\0' 'x'; fi; echo done";
  // Machine 0's files are limited to 1 MiB (ulimit -f, in 512-byte blocks), as a full disk would
  // stop them; SIGXFSZ is ignored, so a write past it fails as on a full disk.
  const auto r = runMachines(dir, 2, script, {"sh", "-c", "trap '' XFSZ; ulimit -f 2048; exec \"$@\"", "sh"});
  INFO(r[0].err << r[1].err);
  CHECK(r[0].exit_code == 0);
  CHECK(r[1].exit_code == 0);
  CHECK(occurrences(r[0].err, "warning: the other machines' logs cannot be written in this machine's --log_dir") == 1);
  CHECK(slurp(runFolder(dir.file("logs1")) + "/attempt_0/1/stdout.log").size() == 3000005);
}

TEST_CASE("machine logs: torchrun's duplicate filters copy the console's matching lines", "[launch][logs]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  auto r = run({accelBinary(),
                "torchrun",
                "--nproc_per_node",
                "2",
                "--master_port",
                "0",
                "--log_dir",
                logs,
                "--tee",
                "3",
                "--duplicate_stdout_filters",
                "apple,or,,ange",
                "--duplicate_stderr_filters",
                "pear",
                "--local_ranks_filter",
                "1",
                "--no_python",
                "sh",
                "-c",
                "echo 'an apple'; echo banana; echo 'or,ange juice'; echo pear >&2; echo grape >&2"},
               {}, hermeticEnv(dir), 60000);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string attempt = runFolder(logs) + "/attempt_0";
  // Only rank 1's streams are on the console (--local_ranks_filter), so only its lines are copied.
  CHECK(slurp(attempt + "/filtered_stdout.log") == "[default1]:an apple\n[default1]:or,ange juice\n");
  CHECK(slurp(attempt + "/filtered_stderr.log") == "[default1]:pear\n");
  auto refused = run({accelBinary(), "launch", "--cpu", "--num_processes", "2", "--duplicate_stdout_filters", "x",
                      "--no_python", "true"},
                     {}, hermeticEnv(dir), 30000);
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.err, "--duplicate_stdout_filters writes its copy in --log_dir's attempt folders"));
}
