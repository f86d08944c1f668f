// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

bool isRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isExecutableFile(const std::string& path) {
  return isRegularFile(path) && ::access(path.c_str(), X_OK) == 0;
}

std::string pythonFor(const ProgramOptions& o) {
  std::string wanted = o.python.value_or("");
  if (wanted.empty()) {
    const char* from_env = std::getenv(launch_env::kPython);
    wanted = from_env && *from_env ? from_env : "python3";
  }
  std::string found = findExecutable(wanted, o.path_env);
  if (found.empty()) {
    throw UsageError("Python interpreter '" + wanted + "' not found",
                     "pass --python /path/to/python3 or set ACCEL_PYTHON");
  }
  return found;
}

}  // namespace

std::string findExecutable(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return isExecutableFile(name) ? name : "";
  for (const auto& dir : split(path_env, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (isExecutableFile(candidate)) return candidate;
  }
  return "";
}

std::vector<std::string> resolveProgram(const std::vector<std::string>& command,
                                        const ProgramOptions& o) {
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
    if (!isRegularFile(program)) {
      throw UsageError("Python script '" + program + "' does not exist",
                       "check the path (relative paths start from the current directory)");
    }
    argv = {pythonFor(o), "-u", program};
  } else {
    std::string found = findExecutable(program, o.path_env);
    if (found.empty()) {
      bool exists = program.find('/') != std::string::npos && isRegularFile(program);
      throw UsageError(exists ? "'" + program + "' is not executable"
                              : "program '" + program + "' not found" +
                                    (program.find('/') == std::string::npos ? " on PATH" : ""),
                       exists ? "chmod +x it, or run a Python script with a .py name or --python"
                              : "check the name, or give a path such as ./" + program);
    }
    argv = {found};
  }
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

}  // namespace accel
