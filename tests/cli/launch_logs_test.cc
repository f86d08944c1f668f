// SPDX-License-Identifier: Apache-2.0
// `accel launch --log_dir` in torchrun's layout through the real binary and real workers: each
// launch has its own folder, each round and local rank theirs, so no file is written by two jobs
// or two rounds; a worker's error.json lies beside its logs; the console prefix follows
// torchrun's template (tests/peers/check_log_layout.py compares it with torchrun's own); a bad
// template or a --log_dir that is a file stops the launch before any worker starts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::envWorker;
using accel::test::hermeticEnv;
using accel::test::launchArgs;
using accel::test::run;
using accel::test::RunResult;
using accel::test::slurp;
using accel::test::TempDir;

namespace fs = std::filesystem;

namespace {

RunResult loggedJob(const TempDir& dir, std::vector<std::string> launcher, std::vector<std::string> worker,
                    std::map<std::string, std::string> env = {}) {
  return run(launchArgs(std::move(launcher), std::move(worker)), {}, hermeticEnv(dir, std::move(env)), 60000);
}

// The launch's folder, from the line where the launcher says where its logs are ("" if none).
std::string runDir(const std::string& err) {
  std::smatch m;
  std::regex line(R"(accel: (?:\[round 0\] )?worker logs: (\S+))"
                  R"(/attempt_<restart>/<local rank>/stdout\.log, stderr\.log, error\.json)");
  return std::regex_search(err, m, line) ? m[1].str() : "";
}

// Every file under `dir`, by path.
std::set<std::string> filesUnder(const std::string& dir) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.insert(entry.path().string());
  }
  return files;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A stdout.log written by exactly one worker process: env_worker prints one `pid` line.
bool oneWriter(const std::string& path) { return count(slurp(path), "\npid ") == 1; }

}  // namespace

TEST_CASE("logs: --log_dir files, --tee and --local_ranks_filter", "[launch][output][logs]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  auto r = loggedJob(dir, {"--num_processes", "2", "--log_dir", logs, "--local_ranks_filter", "1", "--tee", "1"},
                     {"--stderr-lines", "2"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(contains(r.out, "[rank 0]"));
  CHECK(contains(r.out, "[rank 1] env RANK=1"));
  CHECK_FALSE(contains(r.err, "[rank 1] stderr line"));  // --tee 1: only stdout on the console
  const std::string run_dir = runDir(r.err);
  REQUIRE(fs::path(run_dir).parent_path() == logs);
  CHECK(contains(slurp(run_dir + "/attempt_0/0/stdout.log"), "env RANK=0\n"));
  CHECK(slurp(run_dir + "/attempt_0/1/stderr.log") == "stderr line 1\nstderr line 2\n");
  auto none = loggedJob(dir, {"--tee", "0"}, {});
  CHECK(none.exit_code == 2);
  CHECK(contains(none.err, "--tee 0 without --log_dir would discard worker output"));
}

TEST_CASE("logs: two jobs with the same --log_dir write no file in common", "[launch][output][logs]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  // One after the other: the second finds the first's files in DIR and must leave them alone.
  auto first = loggedJob(dir, {"--num_processes", "2", "--log_dir", logs}, {});
  auto second = loggedJob(dir, {"--num_processes", "2", "--log_dir", logs}, {});
  INFO(first.err << second.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  const std::string a = runDir(first.err), b = runDir(second.err);
  CHECK(a != b);
  std::set<std::string> logs_written;
  for (const std::string& run_dir : {a, b}) {
    const std::string id = fs::path(run_dir).filename().string();
    const std::regex name(R"((accel-[0-9a-f]{16})_[a-z0-9_]{8})");
    std::smatch m;
    REQUIRE(std::regex_match(id, m, name));  // torchrun's <run id>_<mkdtemp's 8 characters>
    for (const char* rank : {"0", "1"}) {
      const std::string out = run_dir + "/attempt_0/" + rank + "/stdout.log";
      CHECK(oneWriter(out));
      CHECK(contains(slurp(out), "env TORCHELASTIC_RUN_ID=" + m[1].str() + "\n"));
      logs_written.insert(out);
    }
  }
  CHECK(logs_written.size() == 4);
  for (const auto& f : filesUnder(logs)) CHECK((contains(f, a + "/") || contains(f, b + "/")));
}

TEST_CASE("logs: each restart round writes folders of its own, error.json beside the logs",
          "[launch][output][logs][restart]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  auto r = loggedJob(dir, {"--num_processes", "2", "--max_restarts", "1", "--log_dir", logs},
                     {"--fail-rank", "0", "--exit-code", "5", "--record-error", "disk full", "--sleep", "30",
                      "--fail-when-up", dir.file("up")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 5);
  CHECK(contains(r.err, "accel: [round 0] restarting all workers (restart 1 of 1)"));
  CHECK(contains(r.err, "accel: [round 1] rank 0 raised RuntimeError: disk full"));  // read from the log folder
  const std::string run_dir = runDir(r.err);
  REQUIRE(!run_dir.empty());
  std::set<std::string> expected;
  for (int round : {0, 1}) {
    for (int rank : {0, 1}) {
      const std::string folder = fmt::format("{}/attempt_{}/{}", run_dir, round, rank);
      CHECK(oneWriter(folder + "/stdout.log"));
      CHECK(contains(slurp(folder + "/stdout.log"), fmt::format("env TORCHELASTIC_RESTART_COUNT={}\n", round)));
      CHECK(contains(slurp(folder + "/stdout.log"), "env TORCHELASTIC_ERROR_FILE=" + folder + "/error.json\n"));
      expected.insert(folder + "/stdout.log");
      expected.insert(folder + "/stderr.log");
    }
    const std::string error_json = fmt::format("{}/attempt_{}/0/error.json", run_dir, round);
    CHECK(contains(slurp(error_json), "disk full"));  // kept after the launch, as torchrun keeps it
    expected.insert(error_json);
  }
  expected.insert(run_dir + "/events.jsonl");  // the job's story, once for the whole launch
  CHECK(filesUnder(logs) == expected);         // nothing else: no file shared by the rounds
}

TEST_CASE("logs: --log_line_prefix_template and TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE set the prefix",
          "[launch][output][logs]") {
  TempDir dir;
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  auto flag = loggedJob(dir,
                        {"--num_processes", "2", "--role", "trainer", "--log-line-prefix-template",
                         "${role_name}:$rank/${local_rank}@${hostname}$$ "},
                        {}, {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "ignored:"}});
  INFO(flag.out << flag.err);
  REQUIRE(flag.exit_code == 0);
  CHECK(contains(flag.out, fmt::format("trainer:1/1@{}$ env RANK=1\n", host)));
  CHECK(contains(flag.out, fmt::format("trainer:0/0@{}$ env RANK=0\n", host)));
  CHECK_FALSE(contains(flag.out, "[rank"));
  auto env = loggedJob(dir, {"--num_processes", "2"}, {}, {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "[${rank}]:"}});
  REQUIRE(env.exit_code == 0);
  CHECK(contains(env.out, "[1]:env RANK=1\n"));  // as written: torchrun adds no space
}

TEST_CASE("logs: a bad template or a --log_dir that is a file stops the launch before any worker",
          "[launch][output][logs][errors]") {
  TempDir dir;
  const std::string file = dir.write("taken", "not a directory\n");
  const std::vector<std::string> worker = {"--pidfile", dir.file("pids")};
  auto not_dir = loggedJob(dir, {"--num_processes", "2", "--log_dir", file}, worker);
  CHECK(not_dir.exit_code == 2);
  CHECK(contains(not_dir.err, "--log_dir " + file + " is a file, not a directory"));
  auto flag = loggedJob(dir, {"--num_processes", "2", "--log_line_prefix_template", "[${rnk}] "}, worker);
  CHECK(flag.exit_code == 2);
  CHECK(contains(flag.err, "--log_line_prefix_template '[${rnk}] ': unknown name ${rnk}"));
  CHECK(contains(flag.err, "${role_name}, ${rank}, ${local_rank} and ${hostname}"));
  auto env = loggedJob(dir, {"--num_processes", "2"}, worker, {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "$node: "}});
  CHECK(env.exit_code == 2);
  CHECK(contains(env.err, "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE '$node: ': unknown name ${node}"));
  auto unclosed = loggedJob(dir, {"--log_line_prefix_template", "${rank"}, worker);
  CHECK(unclosed.exit_code == 2);
  CHECK(contains(unclosed.err, "'${rank' has no closing }"));
  CHECK_FALSE(fs::exists(dir.file("pids")));
  CHECK(slurp(file) == "not a directory\n");
}
