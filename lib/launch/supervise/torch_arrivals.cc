// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/torch_arrivals.h"

#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/flight_ring.h"
#include "lib/common/write_fully.h"

namespace accel::launch::supervise {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxOutput = 64u << 20;
constexpr auto kMargin = std::chrono::seconds(1);

// In the look's process: one rank's group-0 calls, or none when it gave no record.
TorchCalls askRank(const flight::TorchRank& r, Clock::time_point deadline) {
  TorchCalls out{r.rank, r.pid, {}};
  std::string why, pickle_handler;
  if (const auto f = flight::askTorchRecord(r, deadline, why, pickle_handler)) {
    for (const auto& c : f->dump.calls) {
      if (c.group == 0) out.calls.emplace_back(c.seq, c.enqueued_ns);
    }
  }
  return out;
}

int look(const std::vector<flight::TorchRank>& ranks, int out) {
  std::vector<TorchCalls> answers(ranks.size());
  const auto deadline = Clock::now() + TorchArrivals::kLimit;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i) {
    threads.emplace_back([&, i] { answers[i] = askRank(ranks[i], deadline); });
  }
  for (auto& t : threads) t.join();
  writeFully(out, encodeTorchCalls(answers));
  return 0;
}

}  // namespace

std::string TorchArrivals::start(const std::vector<flight::TorchRank>& ranks) {
  if (ranks.empty()) return "";
  try {
    child_.start([&ranks](int out) { return look(ranks, out); }, Clock::now() + kLimit + kMargin, kMaxOutput);
  } catch (const Error& e) {
    return fmt::format("no process to ask them ({}); the job goes on", e.what());
  }
  return "";
}

std::optional<std::vector<TorchCalls>> TorchArrivals::service(const std::vector<pollfd>& fds) {
  auto answer = child_.service(fds);
  if (!answer) return std::nullopt;
  if (answer->timed_out) return std::vector<TorchCalls>{};  // its text may end inside a number
  return decodeTorchCalls(answer->text).value_or(std::vector<TorchCalls>{});
}

std::string encodeTorchCalls(const std::vector<TorchCalls>& ranks) {
  std::string text;
  for (const auto& r : ranks) {
    text += fmt::format("{} {} {}\n", r.rank, r.pid, r.calls.size());
    for (const auto& [seq, ns] : r.calls) text += fmt::format("{} {}\n", seq, ns);
  }
  return text;
}

std::optional<std::vector<TorchCalls>> decodeTorchCalls(const std::string& text) {
  std::istringstream in(text);
  std::vector<TorchCalls> ranks;
  TorchCalls r;
  size_t count = 0;
  while (in >> r.rank >> r.pid >> count) {
    if (count > kMaxOutput) return std::nullopt;
    r.calls.clear();
    for (size_t i = 0; i < count; ++i) {
      uint64_t seq = 0;
      int64_t ns = 0;
      if (!(in >> seq >> ns)) return std::nullopt;
      r.calls.emplace_back(seq, ns);
    }
    ranks.push_back(r);
  }
  if (!in.eof()) return std::nullopt;
  return ranks;
}

}  // namespace accel::launch::supervise
