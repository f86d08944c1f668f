// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/rank_stacks.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/cpu_list.h"
#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/temporary_folder.h"
#include "lib/launch/flight/flight_json.h"
#include "lib/launch/flight/torch_records.h"
#include "lib/launch/job/job_round.h"
#include "lib/launch/plan/worker_env.h"

namespace accel::launch::supervise {

namespace {
// How much longer than the job's gathering a machine holds its stop: the job's Stop crosses the
// channel after it.
constexpr double kHoldMargin = 2;
// How long a Python rank's worker server may take to give its flight record.
constexpr std::chrono::milliseconds kTorchRecordLimit{3000};
}  // namespace

void RankStacks::collect(long long id, double seconds, int round) {
  waiting_.push_back(id);
  if (collector_.running()) return;  // its result answers this one too
  std::vector<stacks::RunningRank> ranks;
  flight_texts_.clear();
  const int64_t now = accel::flight::nowNs(), offset = accel::flight::realtimeOffsetNs();
  ended_.clear();
  for (const auto& w : workers_) {
    if (!w.spec || !w.spec->label.empty() || w.pid <= 0) continue;
    if (w.running) ranks.push_back({w.spec->rank, w.pid});
    if (!w.running) ended_.push_back({w.spec->rank, w.pid});
    // The rings first, as they are now (the tools stop each rank for a moment); an ended rank's
    // too: it may be the one whose collective timed out.
    if (auto dump = flights_.read(w)) flight_texts_[w.spec->rank] = flight::encodeFlight({*dump, now, offset});
    if (!w.running && !flight_texts_.count(w.spec->rank)) keepTimeoutDump(w.spec->rank, round);
  }
  collector_.start(ranks, processEnvironment(), defaults::fromSeconds(seconds), torchFlights(seconds, round));
}

// A Python rank on GPUs that ended (its collective timed out: torch's watchdog dumped its record
// and ended it) has no server to ask: its dump is kept for torch's fr_trace, and named.
void RankStacks::keepTimeoutDump(int rank, int round) {
  if (!plan_.torch_nccl || !plan_.torch_dump_file || flights_.hookFolder().empty()) return;
  const std::string from = plan::torchDumpPrefix(flights_.hookFolder()) + std::to_string(rank);
  const std::string to = fmt::format("{}/flight/torch_rank_{}", roundDir(round), rank);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(from, ec)) return;
  try {
    writeFileAtomic(to, readFile(from), true);
    flight_texts_[rank] = flight::encodeMissing("it had ended; torch's own dump at its timeout is kept: " + to);
  } catch (const Error& e) {
    flight_texts_[rank] =
        flight::encodeMissing(fmt::format("it had ended; torch's own dump at its timeout ({}) "
                                          "was not kept: {}",
                                          from, e.what()));
  }
}

// Python ranks' records, from torch's worker server through accel's hook (plan/torch_flight.h),
// read by the collecting process; torch's pickles go to the round's flight folder.
stacks::CollectBefore RankStacks::torchFlights(double seconds, int round) const {
  const std::vector<flight::TorchRank> ranks = flights_.torchRanks(workers_, plan_);
  if (ranks.empty()) return {};
  const auto limit = std::min(kTorchRecordLimit, defaults::fromSeconds(seconds));
  std::string dir = roundDir(round) + "/flight";
  auto run = [ranks, limit, dir] {
    std::map<int, std::string> out;
    const auto answers = flight::readTorchRanks(ranks, limit, dir);
    for (size_t i = 0; i < ranks.size(); ++i) {
      out[ranks[i].rank] = answers[i].flight.empty() ? flight::encodeMissing(answers[i].missing) : answers[i].flight;
    }
    return out;
  };
  return {run, limit};
}

void RankStacks::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  collector_.addPollFds(fds, timeout_ms);
  if (!stop_due_) return;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*stop_due_ - std::chrono::steady_clock::now());
  const int due = static_cast<int>(std::max<long long>(0, left.count()));
  if (timeout_ms < 0 || due < timeout_ms) timeout_ms = due;
}

bool RankStacks::holdStop(const job::WorkerFailure& failure) {
  if (plan_.stacks_timeout <= 0 || !job::timedOutInCollective(failure)) return false;
  const double wait = plan_.stacks_timeout + defaults::kStacksSlackSeconds + kHoldMargin;
  stop_due_ = std::chrono::steady_clock::now() + defaults::fromSeconds(wait);
  return true;
}

void RankStacks::service(const std::vector<pollfd>& fds) {
  auto stacks = collector_.service(fds);
  if (!stacks) return;
  for (const stacks::RunningRank& r : ended_) {
    if (!flight_texts_.count(r.rank)) continue;
    stacks::RankStack s;
    s.rank = r.rank;
    s.pid = r.pid;
    s.problem = "it had ended";
    stacks->push_back(std::move(s));
  }
  for (stacks::RankStack& s : *stacks) {
    if (auto it = flight_texts_.find(s.rank); it != flight_texts_.end()) s.flight = it->second;
  }
  std::sort(stacks->begin(), stacks->end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (long long id : std::exchange(waiting_, {})) link_.stacksCollected(id, *stacks);
}

bool RankStacks::follow(const job::JobEvent& event, int round) {
  if (event.kind == job::JobEvent::Kind::Collect) {
    collect(event.id, event.seconds, round);
    return true;
  }
  if (event.kind != job::JobEvent::Kind::Stacks || event.id != 0) return false;
  const auto records = flightRecords(*event.stacks, plan_.host);  // decoded once, kept and judged
  summary_ = flightSummary(records, keepFlights(*event.stacks, records, round), plan_.world_size);
  for (std::string& line : stacksSummary(*event.stacks, keep(*event.stacks, round))) summary_.push_back(line);
  return true;
}

// Every stack in full, in a file of the round; returns "in full: PATH", or why there is none.
std::string RankStacks::keep(const stacks::GatheredStacks& stacks, int round) const {
  const std::string path = roundDir(round) + "/stacks.txt";
  std::string text = fmt::format("# {}\n# read in {:.2f} s\n", stacks.why, stacks.seconds);
  for (const std::string& note : stacks.notes) text += "# " + note + "\n";
  text += stacks::stacksText(stacks.ranks);
  try {
    writeFileAtomic(path, text, true);
  } catch (const Error& e) {
    return fmt::format("not kept: {}", e.what());
  }
  return "in full: " + path;
}

std::string RankStacks::roundDir(int round) const {
  const std::string run_dir = run_dir_.empty() ? temporaryDirectory() + "/" + plan_.run_id : run_dir_;
  return fmt::format("{}/attempt_{}", run_dir, round);
}

// Every rank's flight record as JSON (flight/flight_json.h), a file per rank in the round's
// flight/ folder; returns "records: DIR", or why there are none.
std::string RankStacks::keepFlights(const stacks::GatheredStacks& stacks,
                                    const std::vector<flight::RankRecord>& records, int round) const {
  if (std::none_of(stacks.ranks.begin(), stacks.ranks.end(), [](const auto& s) { return !s.flight.empty(); })) {
    return "";
  }
  const std::string dir = roundDir(round) + "/flight";
  try {
    for (const flight::RankRecord& r : records) {
      writeFileAtomic(fmt::format("{}/rank_{}.json", dir, r.rank),
                      flight::flightJson(r, plan_.run_id, round).dump() + "\n", true);
    }
  } catch (const Error& e) {
    return fmt::format("not kept: {}", e.what());
  }
  return "records: " + dir;
}

std::vector<std::string> stacksSummary(const stacks::GatheredStacks& stacks, const std::string& kept_in) {
  std::vector<std::string> lines = {
      fmt::format("where each rank was before the stop (stacks read in {:.2f} s; {}):", stacks.seconds, kept_in)};
  for (const std::string& line : stacks::stackSummaryLines(stacks.ranks)) lines.push_back("  " + line);
  for (const std::string& note : stacks.notes) lines.push_back("  " + note);
  if (stacks.ranks.empty() && stacks.notes.empty()) lines.push_back("  no rank was running");
  return lines;
}

std::vector<flight::RankRecord> flightRecords(const stacks::GatheredStacks& stacks, const std::string& host) {
  std::vector<flight::RankRecord> out;
  for (const stacks::RankStack& s : stacks.ranks) {
    flight::RankRecord r{s.rank, s.host.empty() ? host : s.host, s.pid, std::nullopt, ""};
    try {
      if (auto why = flight::missingReason(s.flight)) {
        r.missing = *why;
      } else if (!s.flight.empty()) {
        r.flight = flight::decodeFlight(s.flight);
      }
    } catch (const Error& e) {
      r.missing = fmt::format("its record did not read: {}", e.what());
    }
    if (!r.flight && r.missing.empty())
      r.missing = "none was recorded (a program without libaccel_runtime's collectives)";
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> flightSummary(const std::vector<flight::RankRecord>& records, const std::string& kept_in,
                                       int world_size) {
  if (kept_in.empty()) return {};
  std::vector<int> absent;
  for (int rank = 0; rank < world_size; ++rank) {
    const bool seen = std::any_of(records.begin(), records.end(), [rank](const auto& r) { return r.rank == rank; });
    if (!seen) absent.push_back(rank);
  }
  const flight::FlightVerdict v = flight::judgeFlights(records);
  std::vector<std::string> lines = {fmt::format("where the ranks part (their flight records; {}):", kept_in)};
  lines.push_back("  " + (v.line.empty() ? std::string("every rank completed the same calls") : v.line));
  if (!v.mismatch.empty()) lines.push_back("  " + v.mismatch);
  for (const std::string& note : v.notes) lines.push_back("  " + note);
  if (!absent.empty()) {
    lines.push_back(fmt::format("  no flight record from {} {}: no stack or record came from their machine (see below)",
                                absent.size() == 1 ? "rank" : "ranks", cpuListText(absent)));
  }
  return lines;
}

}  // namespace accel::launch::supervise
