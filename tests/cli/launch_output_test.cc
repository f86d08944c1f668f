// SPDX-License-Identifier: Apache-2.0
// What `accel launch` writes where its console is not a terminal (a file, a pipe, CI), through
// the real binary and output_worker: progress bars thinned to one frame per
// ACCEL_PROGRESS_INTERVAL plus the last, open lines continued after a second, pseudo-terminals
// forced with --pty on (escapes reach the console, never the log), a flood of partial lines,
// frames and 1 MB lines from 4 workers kept whole on the console and byte for byte in the logs,
// and the terminal settings' bad values. The terminal itself is tested in tmux
// (tests/terminal/).
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <sstream>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::hermeticEnv;
using accel::test::occurrences;
using accel::test::outputWorker;
using accel::test::run;
using accel::test::RunResult;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

RunResult outputJob(const TempDir& dir, std::vector<std::string> launcher, std::vector<std::string> worker,
                    std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", "--main_process_port", "0"};
  argv.insert(argv.end(), launcher.begin(), launcher.end());
  argv.push_back(outputWorker());
  argv.insert(argv.end(), worker.begin(), worker.end());
  return run(argv, {}, hermeticEnv(dir, std::move(env)), 120000);
}

// The --log_dir file of `rank`'s `stream` ("stdout"), wherever the layout puts it.
std::string logOf(const std::string& dir, int rank, const std::string& stream) {
  const std::regex name("(.*/rank" + std::to_string(rank) + "\\." + stream + "\\.log|.*/" + std::to_string(rank) + "/" +
                        stream + "\\.log)");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (std::regex_match(entry.path().string(), name)) return slurp(entry.path().string());
  }
  FAIL("no " << stream << " log of rank " << rank << " under " << dir);
  return "";
}

}  // namespace

TEST_CASE("output: off a terminal, 1000 frames in 3 s give a few lines, the log keeps them all", "[launch][output]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  const auto start = std::chrono::steady_clock::now();
  auto r = outputJob(dir, {"--num_processes", "2", "--log_dir", logs}, {"frames", "1000", "3"},
                     {{"ACCEL_PROGRESS_INTERVAL", "1"}});
  // The first frame, one a second while the run lasts (longer than 3 s on a loaded machine), the last.
  const size_t at_most = static_cast<size_t>(accel::test::secondsSince(start)) + 2;
  REQUIRE(r.exit_code == 0);
  for (int rank : {0, 1}) {
    const std::string prefix = "[rank " + std::to_string(rank) + "] frame ";
    INFO(r.out);
    CHECK(occurrences(r.out, prefix) <= at_most);
    CHECK(contains(r.out, prefix + "999\n"));  // the last frame, always
    CHECK(occurrences(logOf(logs, rank, "stdout"), "\rframe ") == 1000);
  }
}

TEST_CASE("output: off a terminal, a line open for 2 s is written with … and continued", "[launch][output]") {
  TempDir dir;
  auto r = outputJob(dir, {"--num_processes", "1"}, {"open", "2"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "[rank 0] open…\n[rank 0]  closed\n"));
}

TEST_CASE("output: --pty on gives workers a terminal whose escapes reach the console, not the log",
          "[launch][output]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  auto piped = outputJob(dir, {"--num_processes", "1"}, {"tty"});
  REQUIRE(piped.exit_code == 0);
  CHECK(contains(piped.out, "[rank 0] isatty=0 columns=0\n[rank 0] plain\n"));
  auto pty = outputJob(dir, {"--num_processes", "1", "--pty", "on", "--log_dir", logs}, {"tty"});
  REQUIRE(pty.exit_code == 0);
  // A console that is no terminal reads as 80 columns; the prefix takes its share.
  CHECK(contains(pty.out, "[rank 0] isatty=1 columns=71\n[rank 0] \x1b[31mred\x1b[0m\n"));
  CHECK(logOf(logs, 0, "stdout") == "isatty=1 columns=71\nred\n");
  auto off = outputJob(dir, {"--num_processes", "1", "--pty", "on"}, {"tty"}, {{"ACCEL_PTY", "off"}});
  CHECK(contains(off.out, "isatty=1"));  // the flag wins over the variable
}

TEST_CASE("output: 4 workers flooding partial lines, frames and 1 MB lines: whole lines, complete logs",
          "[launch][output]") {
  TempDir dir;
  const std::string logs = dir.file("logs");
  const std::string copies = dir.file("copy");
  auto r = outputJob(dir, {"--num_processes", "4", "--log_dir", logs}, {"random", "7", "8000000", copies});
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  size_t bad = 0, total = 0;
  const std::regex prefix(R"(\[rank [0-3]\] )");
  for (std::string line; std::getline(lines, line); ++total) {
    const bool whole = std::regex_match(line.substr(0, 9), prefix) && line.find("[rank", 1) == std::string::npos;
    bad += !whole;
  }
  CHECK(total > 100);
  CHECK(bad == 0);
  for (int rank = 0; rank < 4; ++rank) CHECK(logOf(logs, rank, "stdout") == slurp(copies + "." + std::to_string(rank)));
}

TEST_CASE("output: bad terminal settings are usage errors that name them, before any worker starts",
          "[launch][output]") {
  TempDir dir;
  auto bad = [&](std::vector<std::string> flags, std::map<std::string, std::string> env = {}) {
    flags.insert(flags.begin(), {"--num_processes", "2"});
    return outputJob(dir, flags, {"open", "0"}, std::move(env));
  };
  auto interval = bad({}, {{"ACCEL_PROGRESS_INTERVAL", "often"}});
  CHECK(interval.exit_code == 2);
  CHECK(contains(interval.err, "ACCEL_PROGRESS_INTERVAL='often' is not a number of seconds above 0"));
  auto zero = bad({}, {{"ACCEL_PROGRESS_INTERVAL", "0"}});
  CHECK(zero.exit_code == 2);
  auto word = bad({"--stdin_rank", "first"});
  CHECK(word.exit_code == 2);
  CHECK(contains(word.err, "--stdin_rank 'first' is not a rank (an integer) or none"));
  auto range = bad({"--stdin_rank", "2"});
  CHECK(range.exit_code == 2);
  CHECK(contains(range.err, "--stdin_rank '2' is out of range: the job has ranks 0 to 1"));
  auto variable = bad({}, {{"ACCEL_STDIN_RANK", "-1"}});
  CHECK(variable.exit_code == 2);
  CHECK(contains(variable.err, "ACCEL_STDIN_RANK='-1' is out of range"));
  auto pty = bad({"--pty", "yes"});
  CHECK(pty.exit_code == 2);
  CHECK(contains(pty.err, "--pty 'yes' is not auto, on or off"));
  for (const auto* r : {&interval, &zero, &word, &range, &variable, &pty}) CHECK_FALSE(contains(r->out, "[rank"));
  CHECK(bad({"--stdin_rank", "none"}).exit_code == 0);
}
