// SPDX-License-Identifier: Apache-2.0
// Test support: runs the real `accel` binary (or any program) as a child process.
#pragma once

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

// Path of the accel binary under test (ACCEL_BIN, set by CMake).
std::string accelBinary();

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

}  // namespace accel::test
