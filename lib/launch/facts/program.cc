// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/facts/program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::facts {

namespace {

bool isRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isExecutableFile(const std::string& path) { return isRegularFile(path) && ::access(path.c_str(), X_OK) == 0; }

bool isDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Spaces and tabs only: the kernel keeps any other byte, a carriage return included.
std::string stripBlanks(std::string_view text) {
  const size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  return b == std::string_view::npos ? "" : std::string(text.substr(b, e - b + 1));
}

// The program `#!/usr/bin/env [-S] [NAME=VALUE…] PROGRAM …` runs; empty when env's other
// options make it uncertain.
std::string envProgram(const std::string& argument) {
  for (const auto& word : split(argument, ' ')) {
    if (word.empty() || word == "-S" || word == "-i" || word == "-" || word.find('=') != std::string::npos) continue;
    return word[0] == '-' ? "" : word;
  }
  return "";
}

// `interpreter` from `program`'s #! line, when it cannot run: the hint points at one that can.
[[noreturn]] void refuseInterpreter(const std::string& program, const std::string& interpreter,
                                    const std::string& path_env) {
  const std::string what = fmt::format("cannot run {}: its interpreter {} (from its #! line)", program, interpreter);
  if (::access(interpreter.c_str(), F_OK) == 0) {
    throw UsageError(what + " is not an executable file", "make the #! line name an executable interpreter");
  }
  const std::string name = interpreter.substr(interpreter.rfind('/') + 1);
  const std::string on_path = findExecutable(name, path_env);
  throw UsageError(what + " does not exist",
                   on_path.empty()
                       ? fmt::format("install {}, or make the #! line name an interpreter that exists", name)
                       : fmt::format("make the #! line name one that exists: {} is on PATH (#!/usr/bin/env {} "
                                     "finds it wherever it is installed)",
                                     on_path, name));
}

// The kernel's exec of a script whose interpreter is missing fails with "No such file or
// directory", naming only the script; refused here instead, before any worker starts.
void checkInterpreter(const std::string& program, const std::string& found, const std::string& path_env) {
  const auto shebang = readShebang(found);
  if (!shebang || shebang->interpreter.empty()) return;
  if (endsWith(shebang->line, "\r")) {
    throw UsageError(fmt::format("cannot run {}: its #! line ends with a carriage return (Windows line endings), which "
                                 "the kernel takes as part of the interpreter's name or argument",
                                 program),
                     fmt::format("convert it to Unix line endings: sed -i 's/\\r$//' {}", program));
  }
  if (!isExecutableFile(shebang->interpreter)) refuseInterpreter(program, shebang->interpreter, path_env);
  const std::string wanted = endsWith(shebang->interpreter, "/env") ? envProgram(shebang->argument) : "";
  if (wanted.empty() || !findExecutable(wanted, path_env).empty()) return;
  throw UsageError(
      fmt::format("cannot run {}: its interpreter {} (from its #! line, run through {}) {}", program, wanted,
                  shebang->interpreter, wanted.find('/') == std::string::npos ? "is not on PATH" : "does not exist"),
      fmt::format("install {}, add its directory to PATH, or make the #! line name an interpreter that exists",
                  wanted));
}

// Why `program` (no Python script, no module) cannot run: a directory, not executable, or missing.
[[noreturn]] void refuseProgram(const std::string& program) {
  const bool is_path = program.find('/') != std::string::npos;
  if (isDirectory(program)) {
    const std::string dir = program.substr(0, program.find_last_not_of('/') + 1);
    throw UsageError(fmt::format("'{}' is a directory, not a program", program),
                     fmt::format("name the script or executable inside it, e.g. {}/train.py", dir));
  }
  if (is_path && isRegularFile(program)) {
    throw UsageError("'" + program + "' is not executable",
                     "chmod +x it, or run a Python script with a .py name or --python");
  }
  throw UsageError("program '" + program + "' not found" + (is_path ? "" : " on PATH"),
                   is_path ? "check the path (relative paths start from the current directory)"
                           : "check the name, or give a path such as ./" + program);
}

std::string pythonFor(const ProgramOptions& o) {
  std::string wanted = o.python.value_or("");
  if (wanted.empty()) {
    const std::string& named = env::kPython.value();
    wanted = named.empty() ? "python3" : named;
  }
  std::string found = findExecutable(wanted, o.path_env);
  if (found.empty()) {
    throw UsageError("Python interpreter '" + wanted + "' not found",
                     "pass --python /path/to/python3 or set ACCEL_PYTHON");
  }
  return found;
}

}  // namespace

std::optional<Shebang> readShebang(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(256, '\0');  // the kernel reads no further (BINPRM_BUF_SIZE)
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (!startsWith(head, "#!")) return std::nullopt;
  const size_t end = head.find('\n');
  Shebang s{stripBlanks(head.substr(2, end == std::string::npos ? end : end - 2)), "", ""};
  const size_t blank = s.line.find_first_of(" \t");
  s.interpreter = s.line.substr(0, blank);
  if (blank != std::string::npos) s.argument = stripBlanks(s.line.substr(blank));
  return s;
}

std::string findExecutable(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return isExecutableFile(name) ? name : "";
  for (const auto& dir : split(path_env, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (isExecutableFile(candidate)) return candidate;
  }
  return "";
}

std::vector<std::string> resolveProgram(const std::vector<std::string>& command, const ProgramOptions& o) {
  if (command.empty()) {
    throw UsageError("no program to launch", "usage: accel launch [options] PROGRAM [ARGS...]");
  }
  if (o.module && o.no_python) {
    throw UsageError("-m/--module and --no_python cannot be combined",
                     "-m runs a Python module; --no_python runs a program as it is");
  }
  const std::string& program = command[0];
  std::vector<std::string> argv;
  std::vector<std::string> rest(command.begin() + 1, command.end());
  if (o.module) {
    argv = {pythonFor(o), "-u", "-m", program};
  } else if (!o.no_python && (endsWith(program, ".py"))) {
    if (isDirectory(program)) refuseProgram(program);
    if (!isRegularFile(program)) {
      throw UsageError("Python script '" + program + "' does not exist",
                       "check the path (relative paths start from the current directory)");
    }
    argv = {pythonFor(o), "-u", program};
  } else {
    std::string found = findExecutable(program, o.path_env);
    if (found.empty()) refuseProgram(program);
    checkInterpreter(program, found, o.path_env);
    argv = {found};
  }
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

}  // namespace accel::launch::facts
