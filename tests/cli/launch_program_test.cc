// SPDX-License-Identifier: Apache-2.0
// `accel launch` refuses, before any worker starts and with exit 2, what cannot run, naming the
// real reason: a directory given as the program, a script whose #! interpreter does not exist
// (by path or through /usr/bin/env), and a number too large for any integer flag. An interpreter
// that goes away after the check is named where the worker's exec fails.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::run;
using accel::test::RunResult;
using accel::test::TempDir;

namespace {

RunResult launchProgram(const TempDir& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", "-q"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, accel::test::hermeticEnv(dir, {{"PATH", "/usr/bin:/bin"}}), 60000);
}

std::string script(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.write(name, text);
  ::chmod(path.c_str(), 0755);
  return path;
}

}  // namespace

TEST_CASE("launch program: a directory is named as a directory, not as a missing program", "[launch][program]") {
  TempDir dir;
  std::filesystem::create_directory(dir.file("data"));
  const std::string folder = dir.file("data");
  for (const std::string& given : {folder, folder + "/"}) {
    auto r = launchProgram(dir, {given});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "accel: error: '" + given + "' is a directory, not a program\n"));
    CHECK(contains(r.err, "accel: hint: name the script or executable inside it, e.g. " + folder + "/train.py\n"));
  }
  auto missing = launchProgram(dir, {dir.file("nope")});  // what really is missing still says so
  CHECK(contains(missing.err, "accel: error: program '" + dir.file("nope") + "' not found\n"));
}

TEST_CASE("launch program: a #! interpreter that does not exist is named before any worker starts",
          "[launch][program]") {
  TempDir dir;
  const std::string marker = dir.file("ran");
  const std::string body = "\ntouch " + marker + "\n";
  auto by_path = launchProgram(dir, {script(dir, "train.sh", "#!/no/such/python3" + body)});
  INFO(by_path.out << by_path.err);
  CHECK(by_path.exit_code == 2);
  CHECK(contains(by_path.err, "accel: error: cannot run " + dir.file("train.sh") +
                                  ": its interpreter /no/such/python3 (from its #! line) does not exist\n"));
  CHECK(contains(by_path.err, "accel: hint: make the #! line name one that exists: /usr/bin/python3 is on PATH"));
  auto by_env = launchProgram(dir, {script(dir, "env.sh", "#!/usr/bin/env -S accel-no-such-interpreter -u" + body)});
  INFO(by_env.err);
  CHECK(by_env.exit_code == 2);
  CHECK(contains(by_env.err, "accel: error: cannot run " + dir.file("env.sh") +
                                 ": its interpreter accel-no-such-interpreter (from its #! line, run through "
                                 "/usr/bin/env) is not on PATH\n"));
  auto crlf = launchProgram(dir, {script(dir, "crlf.sh", "#!/bin/sh\r" + body)});
  CHECK(crlf.exit_code == 2);
  CHECK(contains(crlf.err, "its #! line ends with a carriage return (Windows line endings)"));
  CHECK_FALSE(std::filesystem::exists(marker));  // no worker started
  auto good = launchProgram(dir, {script(dir, "good.sh", "#!/usr/bin/env sh" + body)});
  CHECK(good.exit_code == 0);
  CHECK(std::filesystem::exists(marker));
}

TEST_CASE("launch program: an interpreter gone by a restart is named in the worker's exec failure",
          "[launch][program][restart][failure]") {
  TempDir dir;
  const std::string shell = dir.file("sh");
  std::filesystem::copy_file("/bin/sh", shell);
  // The first round removes its own interpreter and fails; the restart's exec finds none.
  auto r = launchProgram(
      dir, {"--max_restarts", "1", script(dir, "train.sh", "#!" + shell + "\nrm -f " + shell + "\nexit 3\n")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 127);
  CHECK(contains(r.err, "[rank 0] accel: error: cannot execute " + dir.file("train.sh") +
                            ": No such file or directory (its interpreter " + shell +
                            ", from its #! line, is missing)\n"));
}

TEST_CASE("launch program: a number past any integer flag's range is out of range, not 'not an integer'",
          "[launch][flags]") {
  TempDir dir;
  auto r = launchProgram(dir, {"--num_processes", "99999999999999999999", "/bin/true"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err,
                 "accel: error: --num_processes: '99999999999999999999' is out of range: it must be from 1 to "
                 "9223372036854775807\n"));
  auto port = launchProgram(dir, {"--job_port", "99999999999999999999", "/bin/true"});
  CHECK(contains(port.err,
                 "accel: error: --job_port: '99999999999999999999' is out of range: it must be from 1 to 65535\n"));
}
