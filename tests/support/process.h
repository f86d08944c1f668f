// SPDX-License-Identifier: Apache-2.0
// Test support: runs the real `accel` binary (or any program) as a child process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace accel::test {

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs `argv` with `input` on stdin and the environment overridden by `env` (an empty value
// unsets a variable). Kills the child and fails the result after `timeout_ms`.
RunResult run(const std::vector<std::string>& argv, const std::string& input = {},
              const std::map<std::string, std::string>& env = {}, int timeout_ms = 20000);

// A child running in the background, its stdout and stderr collected, for tests that act on
// it while it runs (signals, SIGKILL). Killed and reaped on destruction.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Reads until `text` has appeared `times` times in stdout+stderr; false on timeout or exit.
  bool waitForOutput(const std::string& text, int times = 1, int timeout_ms = 20000);
  void signal(int sig);
  // Waits for the exit and collects the rest of the output; exit_code -1 on timeout.
  RunResult wait(int timeout_ms = 30000);
  pid_t pid() const { return pid_; }
  std::string output() const { return result_.out + result_.err; }

 private:
  bool pump(int timeout_ms);
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  RunResult result_;
};

// A TCP port that was free a moment ago, for a server a test starts later: the launcher's own
// choice (lib/launch/facts/port.h), so tests meet the same odds of a collision as users do.
int freeLoopbackPort();

// The two ports of a job of several machines on loopback: MASTER_PORT and the job channel's.
struct JobPorts {
  int port = freeLoopbackPort();
  int job_port = freeLoopbackPort();
};

// Whether a process with this pid exists (and is not a zombie).
bool processAlive(pid_t pid);

// The signals /proc/PID/status lists under `field` ("SigIgn", "SigBlk", "ShdPnd"), bit N-1 for
// signal N; every bit set when the process or the field is gone.
unsigned long long procSignals(pid_t pid, const std::string& field);
inline unsigned long long signalBit(int signal) { return 1ULL << (signal - 1); }

// Seconds from `start` to now.
inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Asks `condition` every 10 ms until it holds (true) or `timeout_ms` passed (false).
bool waitUntil(const std::function<bool()>& condition, int timeout_ms = 20000);

// Programs and libraries of the build under test, found beside the running test executable
// (bin/ and ../lib/, the build tree's layout and the GPU bundle's, scripts/test-gpu), so the
// tests run wherever that tree was copied. accelBinary() is ACCEL_BIN when set.
std::string accelBinary();
std::string accelTrain();
std::string envWorker();
std::string outputWorker();
std::string runtimeWorker();
std::string childReport();  // tests/workers/child_report.cc
std::string fakeNvmlLibrary();
std::string fakeCudaLibrary();

// `accel launch --cpu --main_process_port 0 LAUNCHER... env_worker WORKER...`, the command line
// of the tests whose workers are env_worker (its options say how they behave).
std::vector<std::string> launchArgs(std::vector<std::string> launcher, std::vector<std::string> worker);

// `accel launch FLAGS... EXTRA... PROGRAM...`: one machine's launcher of a several-machine test,
// its own flags first, then the case's, then the workers' program.
std::vector<std::string> machineLaunch(const std::vector<std::string>& flags, const std::vector<std::string>& extra,
                                       const std::vector<std::string>& program);

// A fresh directory removed at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

std::string slurp(const std::string& path);

bool contains(const std::string& text, const std::string& part);
// How many times `part` occurs in `text` (overlapping occurrences counted).
size_t occurrences(const std::string& text, const std::string& part);

// An environment that keeps accel and its workers off this machine's state: no user config
// (HF_HOME inside `dir`), no GPU library (NVML and libcuda pointed at missing files), not under
// SLURM, no prefix template of the user's, TMPDIR inside `dir`. Entries of `extra` win.
std::map<std::string, std::string> hermeticEnv(const TempDir& dir, std::map<std::string, std::string> extra = {});
// hermeticEnv for jobs of accel-train: Gloo on loopback, the caller's gradient accumulation unset.
std::map<std::string, std::string> trainerEnv(const TempDir& dir);

// What a launcher gives rank `rank` of `world` started by hand: `per_machine` ranks to a machine
// (0: all on one), the store at 127.0.0.1:`port` proving `token`, Gloo on loopback. Entries of
// `extra` win.
std::map<std::string, std::string> rankEnv(int rank, int world, const std::string& port, const std::string& token,
                                           std::map<std::string, std::string> extra = {}, int per_machine = 0);

}  // namespace accel::test
