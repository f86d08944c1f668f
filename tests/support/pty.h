// SPDX-License-Identifier: Apache-2.0
// Test support: runs a program on a pseudo-terminal, as a person at a terminal would.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace accel::test {

class PtySession {
 public:
  // Starts `argv` on a new 80x24 pseudo-terminal with `env` overrides (empty value unsets).
  PtySession(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~PtySession();
  PtySession(const PtySession&) = delete;
  PtySession& operator=(const PtySession&) = delete;

  // Reads output until `text` has appeared after the previous match; false on timeout/EOF.
  bool waitFor(const std::string& text, int timeout_ms = 10000);
  void send(const std::string& keys);
  // Waits for the program to exit; its exit code (128 + signal), or -1 on timeout (then killed).
  int wait(int timeout_ms = 10000);
  const std::string& output() const { return output_; }

 private:
  bool readSome(int timeout_ms);
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
  size_t cursor_ = 0;  // where the next waitFor starts looking
};

}  // namespace accel::test
