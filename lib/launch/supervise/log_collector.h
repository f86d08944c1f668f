// SPDX-License-Identifier: Apache-2.0
// Machine 0's side of every machine's logs in one place (log_forwarder.h): the other machines'
// rank files written in this launch's --log_dir folder, in torchrun's layout under a folder per
// machine named with its host, made safe for a path:
//   RUN/machine_<M>_<host>/attempt_<round>/<local rank>/stdout.log, stderr.log
// Where a machine dropped bytes, its file says so on a line of its own. A file that cannot be
// written (the disk is full) is said once; the others are still written and the job goes on.
// Single-threaded.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <tuple>

#include "lib/launch/job/job_link.h"

namespace accel::launch::supervise {

// A host name from another machine as one safe path component: letters, digits, '.', '-' and
// '_' kept, anything else '_', no leading '.', at most 64 bytes; "host" for none.
std::string safeHostName(const std::string& host);

class LogCollector {
 public:
  explicit LogCollector(std::function<void(const std::string&)> say) : say_(std::move(say)) {}

  // This launch's folder in --log_dir ("" for none: what comes is not kept).
  void open(const std::string& run_dir) { run_dir_ = run_dir; }
  void write(int machine, const std::string& host, const job::LogChunk& chunk);

 private:
  void failed(const std::string& path, int error);

  std::function<void(const std::string&)> say_;
  std::string run_dir_;
  std::set<std::string> made_;                       // folders made
  std::set<std::tuple<int, int, int, int>> broken_;  // machine, round, local rank, stream: not written
  bool said_ = false;
};

}  // namespace accel::launch::supervise
