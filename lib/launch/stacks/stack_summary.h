// SPDX-License-Identifier: Apache-2.0
// One line for a failure summary from a stack a tool printed (stack_tools.h): where the main
// thread is, innermost frame first. From py-spy's `dump`: "all_reduce
// (torch/distributed/distributed_c10d.py:2501) from main (train.py:20)", the second part naming
// the innermost frame of a file outside any package (py-spy prints package files by their
// package path, a script by its name). From gdb: the innermost frame of thread 1 with a source
// line outside the C library's, "freeze (runtime_worker.cc:149)", else its innermost function. From
// eu-stack: the innermost function. "" when the text holds no frame.
#pragma once

#include <string>

namespace accel::launch::stacks {

std::string summarizePythonStack(const std::string& py_spy_dump);
std::string summarizeNativeStack(const std::string& gdb_or_eu_stack);

}  // namespace accel::launch::stacks
