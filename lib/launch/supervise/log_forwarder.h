// SPDX-License-Identifier: Apache-2.0
// Every machine's logs in one place (--log_dir on several machines): a member's ranks' log bytes,
// as its own files get them (worker_output.h LogForward), sent to machine 0 over the job channel
// (job_link.h sendLogs), where a LogCollector (log_collector.h) writes them. The supervisor's
// loop hands them on as the channel takes them; a worker is never waited for: past kMaxHeld
// bytes held, the newest bytes of a stream are dropped and counted, machine 0 is told how many
// where they were (its file says so), and this machine says so once while it happens and in
// total at the round's end. Everything held goes before the round's end is reported, so machine
// 0 has it when the job ends. This machine's own files always have every byte. Single-threaded.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "lib/launch/job/job_link.h"

namespace accel::launch::supervise {

class LogForwarder {
 public:
  static constexpr size_t kMaxHeld = 16 << 20;
  static constexpr size_t kChunk = 48 << 10;
  static constexpr size_t kLookBack = 16;  // queued chunks looked at for the stream's own

  // Bytes of LOCAL_RANK `local`'s `stream` (1 stdout, 2 stderr) in round `round`.
  void push(int round, int local, int stream, std::string_view bytes);
  // Hands the link what it takes now; with `all` (the round's end) everything held. Returns the
  // lines to say (a stream starts losing bytes; with `all`, each stream's bytes lost).
  std::vector<std::string> service(job::JobLink& link, bool all = false);
  size_t held() const { return held_; }

 private:
  using Key = std::tuple<int, int, int>;  // round, local rank, stream
  std::deque<job::LogChunk> queue_;
  size_t held_ = 0;
  std::map<Key, long long> dropped_;  // not yet told to machine 0
  std::map<Key, long long> lost_;     // in total, this round
  bool said_ = false;
};

}  // namespace accel::launch::supervise
