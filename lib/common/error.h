// SPDX-License-Identifier: Apache-2.0
// Errors every layer throws and the CLI turns into `accel: error: …` lines and an exit status.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace accel {

// Process exit statuses of every accel command (`launch` also passes a worker's own code through).
enum class ExitStatus : int { Success = 0, Failure = 1, Usage = 2, Interrupted = 130 };

// One problem found in user input: where it is, what is wrong, and (when known) how to fix it.
// `where` is e.g. "cfg.yaml:3:5", "cfg.yaml" or "--num_processes"; it may be empty.
struct Diagnostic {
  std::string where;
  std::string message;
  std::string hint;
};

// Base error. what() is the one-line message (lowercase start, no trailing period); hint() a fix.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string hint = {}, ExitStatus status = ExitStatus::Failure)
      : std::runtime_error(message), hint_(std::move(hint)), status_(status) {}
  const std::string& hint() const { return hint_; }
  ExitStatus status() const { return status_; }

 private:
  std::string hint_;
  ExitStatus status_;
};

// Bad command-line usage (exit 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message, std::string hint = {})
      : Error(message, std::move(hint), ExitStatus::Usage) {}
};

// One or more problems in a configuration file or value (exit 2). Holds every diagnostic found,
// so a user fixes a file in one pass instead of one error per run.
class ConfigError : public Error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// The user pressed Ctrl-C (exit 130).
class Interrupted : public Error {
 public:
  explicit Interrupted(const std::string& message) : Error(message, {}, ExitStatus::Interrupted) {}
};

// Formats a diagnostic as "where: message" (or just the message when `where` is empty).
std::string formatDiagnostic(const Diagnostic& d);

}  // namespace accel
