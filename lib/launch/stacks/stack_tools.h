// SPDX-License-Identifier: Apache-2.0
// Which program reads a worker's current stack: py-spy (`dump`) for a Python interpreter, gdb
// (every thread's backtrace, then it detaches) for any other program, else elfutils' eu-stack.
// py-spy is looked for on PATH, then beside the worker's interpreter (a virtual environment's
// bin/), then at ACCEL_PY_SPY; gdb and eu-stack on PATH. Reading a stack attaches to the worker
// with ptrace for a moment: it takes the worker's user (or root) and, where Yama's ptrace_scope is
// 1, a descendant of the process the worker declared its tracer (accel's launcher declares
// itself, worker_process.cc), or root.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace accel::launch::stacks {

// gdb also prints libaccel_runtime's `accel_collective_now` (runtime/comm/collective_now.h) on a
// line of its own after this mark.
inline constexpr const char* kCollectiveNowMark = "accel collective: ";

struct StackCommand {
  std::vector<std::string> argv;  // empty when no tool is there: `missing` says what to install
  bool python = false;            // the worker is a Python interpreter (py-spy's text format)
  std::string tool;               // "py-spy", "gdb" or "eu-stack"
  std::string missing;
};

// `env`: the environment to look tools up in (PATH, ACCEL_PY_SPY).
StackCommand stackCommand(pid_t pid, const std::map<std::string, std::string>& env);

// The program `pid` runs (/proc/PID/exe), or "" when it cannot be read.
std::string processExecutable(pid_t pid);

}  // namespace accel::launch::stacks
