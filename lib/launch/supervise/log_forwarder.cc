// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/log_forwarder.h"

#include <algorithm>

#include <fmt/format.h>

namespace accel::launch::supervise {

namespace {

std::string streamName(int local, int stream) {
  return fmt::format("local rank {}'s {}", local, stream == 1 ? "stdout" : "stderr");
}

}  // namespace

void LogForwarder::push(int round, int local, int stream, std::string_view bytes) {
  const Key key{round, local, stream};
  if (held_ + bytes.size() > kMaxHeld) {
    dropped_[key] += static_cast<long long>(bytes.size());
    lost_[key] += static_cast<long long>(bytes.size());
    return;
  }
  held_ += bytes.size();
  while (!bytes.empty()) {
    // The stream's newest chunk among the last few (ranks' streams interleave; each file's bytes
    // stay in order, files need no order between them), else a new one.
    job::LogChunk* last = nullptr;
    for (size_t back = 0; back < std::min<size_t>(queue_.size(), kLookBack) && !last; ++back) {
      job::LogChunk& c = queue_[queue_.size() - 1 - back];
      if (c.round == round && c.local_rank == local && c.stream == stream) last = &c;
    }
    const bool same = last && last->data.size() < kChunk && !dropped_.count(key);
    if (!same) {
      const auto d = dropped_.find(key);
      queue_.push_back({round, local, stream, {}, d == dropped_.end() ? 0 : d->second});
      if (d != dropped_.end()) dropped_.erase(d);
      last = &queue_.back();
    }
    const size_t take = std::min(bytes.size(), kChunk - last->data.size());
    last->data.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
}

std::vector<std::string> LogForwarder::service(job::JobLink& link, bool all) {
  std::vector<std::string> lines;
  if (!dropped_.empty() && !said_) {
    said_ = true;
    const auto& [round, local, stream] = dropped_.begin()->first;
    lines.push_back(
        fmt::format("warning: the job channel falls behind this machine's logs: some of {} is not sent to machine 0's "
                    "--log_dir (this machine's --log_dir keeps every byte)",
                    streamName(local, stream)));
  }
  using Send = job::JobLink::LogSend;
  while (!queue_.empty()) {
    const job::LogChunk& c = queue_.front();
    const Send sent = link.sendLogs(c, all);
    if (sent == Send::Later) break;
    if (sent == Send::Nobody) lost_[{c.round, c.local_rank, c.stream}] += static_cast<long long>(c.data.size());
    held_ -= c.data.size();
    queue_.pop_front();
  }
  if (!all) return lines;
  for (const auto& [key, count] : dropped_) {  // drops after the last bytes sent: told with none
    link.sendLogs({std::get<0>(key), std::get<1>(key), std::get<2>(key), {}, count}, true);
  }
  dropped_.clear();
  for (const auto& [key, count] : lost_) {
    lines.push_back(fmt::format("{}: {} bytes were not sent to machine 0's --log_dir (they are in this machine's)",
                                streamName(std::get<1>(key), std::get<2>(key)), count));
  }
  lost_.clear();
  said_ = false;
  return lines;
}

}  // namespace accel::launch::supervise
