// SPDX-License-Identifier: Apache-2.0
// Turns `accel launch … PROGRAM ARGS` into the argv each worker executes, checking before
// anything starts that the program exists and can run.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace accel::launch::facts {

struct ProgramOptions {
  bool module = false;                // -m: PROGRAM is a Python module
  bool no_python = false;             // run PROGRAM as it is
  std::optional<std::string> python;  // --python, else $ACCEL_PYTHON, else python3 on PATH
  std::string path_env;               // $PATH used for lookups
};

// "train.py a b" -> {"/usr/bin/python3", "-u", "train.py", "a", "b"}; an executable runs
// directly (found on PATH like a shell would). Throws UsageError naming what is missing.
std::vector<std::string> resolveProgram(const std::vector<std::string>& command, const ProgramOptions& options);

// What a script's "#!" line runs, as the kernel reads it (the file's first 256 bytes; blanks are
// spaces and tabs, so a carriage return stays): the interpreter, up to the first blank, and the
// rest of the line as its one argument.
struct Shebang {
  std::string line;  // after "#!", without its newline, blanks stripped at both ends
  std::string interpreter, argument;
};
// Nullopt when `path` cannot be read or does not start with "#!".
std::optional<Shebang> readShebang(const std::string& path);

// The executable `name` resolves to: itself when it contains '/', else the first match on
// `path_env`; empty when not found.
std::string findExecutable(const std::string& name, const std::string& path_env);

}  // namespace accel::launch::facts
