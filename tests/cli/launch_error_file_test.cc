// SPDX-License-Identifier: Apache-2.0
// torchelastic's conventions in `accel launch`: every worker gets its own
// TORCHELASTIC_ERROR_FILE, the exception a worker recorded there (as torch's @record does) is
// what the failure summary shows, and torch's own `[rankN]: ` prefix is not printed after accel's.
// env_worker --record-error writes the file in torch's format; tests/peers/check_torchelastic.py
// does the same with real torch and @record.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::envWorker;
using accel::test::hermeticEnv;
using accel::test::run;
using accel::test::TempDir;

TEST_CASE("launch: a worker's recorded exception is the failure summary, its files go with the launch",
          "[launch][supervise][failure]") {
  TempDir dir;
  auto r = run({accelBinary(), "launch", "--cpu", "--main_process_port", "0", "--num_processes", "2", envWorker(),
                "--fail-rank", "1", "--exit-code", "1", "--record-error", "disk full", "--sleep", "30",
                // rank 1 fails only once every rank printed its variables (or rank 0 may be stopped first)
                "--fail-when-up", dir.file("up")},
               {}, hermeticEnv(dir), 60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "accel: rank 1 raised RuntimeError: disk full\n"));
  CHECK(contains(r.err, "accel: its traceback (from its TORCHELASTIC_ERROR_FILE):\n"));
  CHECK(contains(r.err, "accel:   |   File \"train.py\", line 7, in main\n"));
  CHECK(contains(r.err, "accel:   | RuntimeError: disk full\n"));
  // torch's excepthook already names the rank: shown once, accel's way.
  CHECK(contains(r.err, "[rank 1] boom disk full\n"));
  CHECK(!contains(r.err, "[rank1]:"));
  // One file per worker, none there before it starts, the directory removed at the end.
  std::regex line(R"(\[rank (\d)\] env TORCHELASTIC_ERROR_FILE=(\S+))");
  std::set<std::string> files;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
    CHECK_THAT((*it)[2].str(), Catch::EndsWith("/attempt_0/" + (*it)[1].str() + "/error.json"));
    files.insert((*it)[2]);
  }
  REQUIRE(files.size() == 2);
  for (const auto& f : files) CHECK(!std::filesystem::exists(std::filesystem::path(f).parent_path().parent_path()));
}

TEST_CASE("launch: without a recorded exception the summary shows the stderr tail", "[launch][supervise][failure]") {
  TempDir dir;
  auto r = run({accelBinary(), "launch", "--cpu", "--main_process_port", "0", "--num_processes", "2", envWorker(),
                "--fail-rank", "0", "--exit-code", "3", "--stderr-lines", "2"},
               {}, hermeticEnv(dir), 60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(!contains(r.err, "raised"));
  CHECK(contains(r.err, "accel: last 2 line(s) of rank 0's stderr:\naccel:   | stderr line 1\n"));
}
