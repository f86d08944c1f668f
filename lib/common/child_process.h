// SPDX-License-Identifier: Apache-2.0
// Programs a command runs to completion as its own steps (`accel test` runs `accel launch`
// twice): one in the foreground, sharing this process's terminal, and one whose output is read.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace accel {

// Runs argv[0] (found on PATH when it has no '/') with this process's stdin, stdout and stderr,
// and returns its exit status, or 128 + the signal that ended it. The child shares this
// process's process group, so a terminal's Ctrl-C reaches it directly: this process ignores
// SIGINT while it runs and passes SIGTERM and SIGHUP on to it. Throws Error naming the program
// when it cannot be started.
int runForeground(const std::vector<std::string>& argv);

// Runs argv with stdin from /dev/null and stderr discarded, and returns what it wrote to stdout;
// nullopt when it cannot start, exits non-zero, or is still running after `limit` (it is then
// killed).
std::optional<std::string> captureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds limit);

}  // namespace accel
