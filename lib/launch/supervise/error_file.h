// SPDX-License-Identifier: Apache-2.0
// torchelastic's error files: each worker gets TORCHELASTIC_ERROR_FILE, a path of its own per
// round, where a Python entry point decorated with torch's @record
// (torch.distributed.elastic.multiprocessing.errors) writes its uncaught exception as JSON; the
// launcher reads it back for the failure summary, as torchrun does. The files live in one
// directory per launch, made on first use and removed with this object, or, with --log_dir, in
// the launch's log folder beside each worker's logs (log_layout.h), where they stay.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accel::launch::supervise {

class ErrorFiles {
 public:
  ErrorFiles() = default;
  ~ErrorFiles();
  ErrorFiles(const ErrorFiles&) = delete;
  ErrorFiles& operator=(const ErrorFiles&) = delete;

  // The files go under `run_dir` (a --log_dir's folder of this launch) and stay there.
  void keepIn(std::string run_dir) {
    dir_ = std::move(run_dir);
    keep_ = true;
  }
  // DIR/attempt_ROUND/LOCAL_RANK/error.json, its directories made and no file there yet; "" when
  // the directory cannot be made (the worker then runs without one, and `takeProblem()` says why).
  std::string pathFor(int round, int local_rank);
  // Why a path was "" since the last call, or ""; the next pathFor tries again.
  std::string takeProblem() { return std::exchange(problem_, {}); }

 private:
  std::string dir_;
  bool keep_ = false;
  std::string problem_;
};

// What a worker recorded: "RuntimeError: boom" and the Python traceback's lines.
struct RecordedError {
  std::string message;
  std::vector<std::string> traceback;
};

// The error a file holds in torch's format ({"message": {"message", "extraInfo": {"py_callstack"}}}),
// or nullopt when there is no file (the worker did not use @record) or it is not in that format.
std::optional<RecordedError> readErrorFile(const std::string& path);

}  // namespace accel::launch::supervise
