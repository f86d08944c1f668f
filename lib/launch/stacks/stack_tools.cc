// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/stacks/stack_tools.h"

#include <unistd.h>

#include <climits>
#include <fstream>

#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/facts/program.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::stacks {

namespace {

std::string baseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool isPythonName(const std::string& exe) {
  const std::string name = baseName(exe);
  return name.rfind("python", 0) == 0 || name.rfind("pypy", 0) == 0;
}

std::string executableAt(const std::string& path) { return ::access(path.c_str(), X_OK) == 0 ? path : ""; }

// PATH, then the interpreter's own bin/ (where `pip install py-spy` in a venv puts it), then
// ACCEL_PY_SPY.
std::string findPySpy(const std::string& interpreter, const std::map<std::string, std::string>& vars) {
  if (std::string found = facts::findExecutable("py-spy", env::kPath.in(vars)); !found.empty()) return found;
  if (std::string beside = executableAt(interpreter.substr(0, interpreter.rfind('/') + 1) + "py-spy");
      !beside.empty()) {
    return beside;
  }
  return executableAt(env::kPySpy.in(vars));
}

// The interpreter as it was started: a virtual environment's bin/python is a link to the real
// one, which /proc/PID/exe resolves, so argv[0] says where the environment's own tools are.
std::string startedAs(pid_t pid, const std::string& exe) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string first;
  std::getline(in, first, '\0');
  return startsWith(first, "/") ? first : exe;
}

}  // namespace

std::string processExecutable(pid_t pid) {
  char buf[PATH_MAX];
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

StackCommand stackCommand(pid_t pid, const std::map<std::string, std::string>& env) {
  const std::string exe = processExecutable(pid), id = std::to_string(pid);
  StackCommand c;
  c.python = isPythonName(exe);
  if (c.python) {
    c.tool = "py-spy";
    if (std::string py_spy = findPySpy(startedAs(pid, exe), env); !py_spy.empty()) {
      c.argv = {py_spy, "dump", "--pid", id};
    } else {
      c.missing =
          "py-spy is not installed: `pip install py-spy` in the workers' environment (or set "
          "ACCEL_PY_SPY to its path)";
    }
    return c;
  }
  const std::string path = env::kPath.in(env);
  if (std::string gdb = facts::findExecutable("gdb", path); !gdb.empty()) {
    c.tool = "gdb";
    // Last, so that in a program without libaccel_runtime its "No symbol" error ends nothing.
    c.argv = {gdb,
              "-p",
              id,
              "-batch",
              "-nx",
              "-ex",
              "set pagination off",
              "-ex",
              "thread apply all bt",
              "-ex",
              std::string("printf \"") + kCollectiveNowMark + "%s\\n\", (char*) &accel_collective_now"};
  } else if (std::string eu_stack = facts::findExecutable("eu-stack", path); !eu_stack.empty()) {
    c.tool = "eu-stack";
    c.argv = {eu_stack, "-p", id};
  } else {
    c.tool = "gdb";
    c.missing = "neither gdb nor eu-stack is installed: `apt-get install gdb` (or elfutils)";
  }
  return c;
}

}  // namespace accel::launch::stacks
