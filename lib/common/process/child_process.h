// SPDX-License-Identifier: Apache-2.0
// Programs a command runs to completion as its own steps (`accel test` runs `accel launch`
// twice): one in the foreground, sharing this process's terminal, and one whose output is read.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace accel::process {

// Runs argv[0] (found on PATH when it has no '/') with this process's stdin, stdout and stderr,
// and returns its exit status, or 128 + the signal that ended it. The child shares this
// process's process group, so a terminal's Ctrl-C reaches it directly: this process ignores
// SIGINT while it runs and passes SIGTERM and SIGHUP on to it (`signalled` says one was, so a
// caller can tell being stopped from a child that died of the same signal); a SIGHUP ignored on
// entry (nohup) stays ignored, in this process and the child. Started as every child is
// (child.h). Throws Error naming the program when it cannot be started.
struct ForegroundEnd {
  int status = 0;
  bool signalled = false;
};
ForegroundEnd runForeground(const std::vector<std::string>& argv);

// Runs argv with stdin from /dev/null and stderr discarded, and returns what it wrote to stdout;
// nullopt when it cannot start, exits non-zero, or is still running after `limit` (it is then
// killed).
std::optional<std::string> captureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds limit);

// What one program of captureOutputs() did.
struct Captured {
  std::string output;      // its stdout, and its stderr after it when `with_stderr`
  int status = -1;         // exit status, 128 + signal, -1 when it could not start
  bool timed_out = false;  // still running at the limit: killed
};

// Runs every argv at once (stdin from /dev/null) and collects their output until each has ended
// or `limit` has passed, then kills what still runs: returns within `limit` plus the time to
// reap them, whatever the programs do. `with_stderr`: stderr goes to the same pipe as stdout.
std::vector<Captured> captureOutputs(const std::vector<std::vector<std::string>>& argvs,
                                     std::chrono::milliseconds limit, bool with_stderr);

}  // namespace accel::process
