// SPDX-License-Identifier: Apache-2.0
// `accel launch` on a terminal (a pseudo-terminal of the test's own, as a person's shell): a
// worker whose two streams both show there gets one pseudo-terminal for both, as a terminal
// gives, so its lines keep their order; with --log_dir it gets one for each, its logs apart; a
// failure's summary then quotes the one stream's last lines as "output".
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/pty.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::hermeticEnv;
using accel::test::PtySession;
using accel::test::TempDir;

namespace {

// Says whether its stdout and stderr are one terminal, then "out K" and "err K" in turn, then
// exits with `code`.
std::string alternating(const TempDir& dir, int code) {
  const std::string path = dir.write("alternate.sh",
                                     "a=$(readlink /proc/$$/fd/1); b=$(readlink /proc/$$/fd/2)\n"
                                     "if [ \"$a\" = \"$b\" ]; then echo one terminal; else echo two terminals; fi\n"
                                     "i=1; while [ $i -le 40 ]; do echo out $i; echo err $i >&2; i=$((i+1)); done\n"
                                     "exit " +
                                         std::to_string(code) + "\n");
  return path;
}

// The "[rank 0] out K" / "[rank 0] err K" lines of `output`, in the order they came.
std::vector<std::string> streamLines(const std::string& output) {
  std::vector<std::string> lines;
  const std::regex line(R"(\[rank 0\] ((out|err) \d+))");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) lines.push_back((*it)[1]);
  return lines;
}

std::vector<std::string> inTurn() {
  std::vector<std::string> lines;
  for (int i = 1; i <= 40; ++i) lines.insert(lines.end(), {"out " + std::to_string(i), "err " + std::to_string(i)});
  return lines;
}

// `accel launch` of one CPU worker running alternating(dir, code) on the test's terminal, with
// `flags` before the program; its exit code and everything the terminal showed.
std::pair<int, std::string> onTerminal(const TempDir& dir, std::vector<std::string> flags, int code) {
  std::vector<std::string> argv = {accelBinary(),         "launch", "--cpu", "--num_processes", "1",
                                   "--main_process_port", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--no_python", "sh", alternating(dir, code)});
  PtySession tty(argv, hermeticEnv(dir));
  const int exit_code = tty.wait(60000);
  return {exit_code, tty.output()};
}

}  // namespace

TEST_CASE("launch on a terminal: one pseudo-terminal for both streams keeps their order, --log_dir keeps two",
          "[launch][output][pty]") {
  TempDir dir;
  const auto [code, shown] = onTerminal(dir, {}, 0);
  INFO(shown);
  CHECK(code == 0);
  CHECK(contains(shown, "[rank 0] one terminal"));
  CHECK(streamLines(shown) == inTurn());

  const auto [logged_code, logged] = onTerminal(dir, {"--log_dir", dir.file("logs")}, 0);
  INFO(logged);
  CHECK(logged_code == 0);
  CHECK(contains(logged, "[rank 0] two terminals"));

  const auto [failed_code, failed] = onTerminal(dir, {}, 3);
  INFO(failed);
  CHECK(failed_code == 3);
  CHECK(contains(failed, "last 20 line(s) of rank 0's output:"));
  CHECK(contains(failed, "accel:   | out 40"));
  CHECK(contains(failed, "accel:   | err 40"));
}
