// SPDX-License-Identifier: Apache-2.0
// `accel test`: Accelerate's first check of a machine or a cluster. It launches, with the config's
// layout exactly as `accel launch --config_file FILE [LAUNCH FLAGS]` would, accel-bench's preflight (every
// transport's results and bandwidth, apps/bench/preflight.cc), then, where the interpreter that
// `accel launch` gives .py programs has Accelerate, Accelerate's own test script as `accelerate
// test` does (through apps/test_script_runner.py, which says why). Exit status: 0 when both
// passed, 1 when either failed (a rank's death by a signal included), 2 when the config or the
// command line was refused (the launcher says why), 130 when interrupted, 128+N when `accel test`
// was sent signal N.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "apps/test_script_runner.h"
#include "lib/common/atomic_file.h"
#include "lib/common/environment.h"
#include "lib/common/process/child_process.h"
#include "lib/common/strings.h"
#include "lib/common/temporary_folder.h"
#include "lib/common/variables.h"
#include "lib/launch/facts/program.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

using namespace std::chrono_literals;

std::string directoryOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Where Accelerate's test script is for `python`, or "" when that interpreter has no Accelerate.
std::string accelerateTestScript(const std::string& python) {
  if (python.empty()) return "";
  auto out = process::captureOutput({python, "-c",
                                     "import os, accelerate; print(os.path.join(os.path.dirname(accelerate.__file__), "
                                     "'test_utils', 'scripts', 'test_script.py'))"},
                                    60s);
  const std::string script = out ? trim(*out) : "";
  return !script.empty() && ::access(script.c_str(), R_OK) == 0 ? script : "";
}

// apps/test_script_runner.py in a private folder of its own for as long as this object lives.
class ScriptRunner {
 public:
  ScriptRunner() : dir_(makeTemporaryFolder("accel-test-")), path_(dir_ + "/test_script_runner.py") {
    try {
      writeFileAtomic(path_, kTestScriptRunner);
    } catch (...) {
      removeFolder();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~ScriptRunner() { removeFolder(); }
  ScriptRunner(const ScriptRunner&) = delete;
  ScriptRunner& operator=(const ScriptRunner&) = delete;
  const std::string& path() const { return path_; }

 private:
  void removeFolder() const {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string dir_, path_;
};

struct Step {
  std::string name;
  process::ForegroundEnd end;
};

// Whether the step's end means `accel test` itself was stopped: Ctrl-C reaches the launcher,
// which exits 130; SIGTERM and SIGHUP were passed on.
bool interrupted(const process::ForegroundEnd& end) {
  return end.signalled || end.status == static_cast<int>(ExitStatus::Interrupted);
}

const process::ForegroundEnd& runStep(const std::vector<std::string>& launch, const std::vector<std::string>& program,
                                      std::vector<Step>& done, const std::string& name) {
  std::vector<std::string> argv = launch;
  argv.insert(argv.end(), program.begin(), program.end());
  std::string shown;
  for (size_t i = 0; i < argv.size(); ++i) shown += (i ? " " : "") + shellQuote(i ? argv[i] : "accel");
  std::cout << "accel test: " << name << ": " << shown << std::endl;
  done.push_back({name, process::runForeground(argv)});
  return done.back().end;
}

int summarize(const std::vector<Step>& steps) {
  std::string failed;
  for (const Step& s : steps) {
    if (s.end.status != 0) failed += fmt::format("{}{} (exit {})", failed.empty() ? "" : ", ", s.name, s.end.status);
  }
  if (failed.empty()) {
    std::cout << "accel test: every check passed: you are ready for distributed training" << std::endl;
    return 0;
  }
  std::cout << "accel test: FAILED: " << failed << std::endl;
  return 1;
}

}  // namespace

int runTest(const ConfigFileOption& file, const std::vector<std::string>& launch_args) {
  const std::string self = selfExecutable();
  const std::string bench = directoryOf(self) + "/accel-bench";
  if (self.empty() || ::access(bench.c_str(), X_OK) != 0) {
    throw Error("accel test runs accel-bench, which is not beside accel (" + bench + ")",
                "build it (cmake --build build --target accel-bench) or reinstall accel");
  }
  std::vector<std::string> launch{self, "launch"};
  if (!file.path.empty()) launch.insert(launch.end(), {"--config_file", file.path});
  launch.insert(launch.end(), launch_args.begin(), launch_args.end());
  std::vector<Step> steps;
  const process::ForegroundEnd preflight = runStep(launch, {bench, "preflight"}, steps, "preflight");
  // Exit 2 from the first launch is the launcher refusing the config or the command line (it
  // said why); the second launch gets the same ones, so a 2 there is the script's own.
  if (interrupted(preflight) || preflight.status == static_cast<int>(ExitStatus::Usage)) return preflight.status;

  const std::string named = env::kPython.value();
  const std::string wanted = named.empty() ? "python3" : named;
  const std::string python = launch::facts::findExecutable(wanted, env::kPath.value());
  const std::string script = accelerateTestScript(python);
  if (script.empty()) {
    std::cout << "accel test: accelerate's test script: skipped: "
              << (python.empty() ? "no Python interpreter '" + wanted + "'" : python + " has no Accelerate")
              << " (pip install accelerate, or set ACCEL_PYTHON to the interpreter that has it)" << std::endl;
  } else {
    const ScriptRunner runner;
    const process::ForegroundEnd end = runStep(launch, {runner.path(), script}, steps, "accelerate's test script");
    if (interrupted(end)) return end.status;
  }
  return summarize(steps);
}

}  // namespace accel
