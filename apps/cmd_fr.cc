// SPDX-License-Identifier: Apache-2.0
// `accel fr [JOB|DIR]`: where the ranks part, from their flight records (docs/diagnose.md): of a
// running job (its launcher pid, its run id, or the only one running here), whose launcher reads
// every rank's record with its stack (as `accel stacks` asks it), or of a folder a stop left
// (`attempt_N/flight` of --log_dir's launch folder, the attempt folder, or the launch folder:
// its last attempt with records). The verdict, then a line per rank: its last completed call and
// the one it is in. `--json`: one object, the verdict and every rank's record. Exit 0 when every
// rank's record was read, 1 when some was not (each says why), 2 for no job, no records, a
// damaged file, or records of two jobs.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/flight/flight_json.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/stacks/running_jobs.h"
#include "lib/launch/supervise/rank_stacks.h"

namespace accel {

namespace {

namespace fs = std::filesystem;
using launch::flight::RankRecord;

// The folder of the ranks' records (a JSON file each) that `dir` names: itself, its flight/, or its last attempt's.
fs::path recordsFolder(const fs::path& dir) {
  const std::regex attempt("attempt_(\\d+)");
  if (fs::exists(dir / "flight")) return dir / "flight";
  int last = -1;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    const auto n = std::regex_match(name, m, attempt) ? parseInt(m[1].str()) : std::nullopt;
    if (n && *n < (1 << 30) && fs::exists(entry.path() / "flight")) last = std::max(last, static_cast<int>(*n));
  }
  return last >= 0 ? dir / fmt::format("attempt_{}", last) / "flight" : dir;
}

// Every rank's record in `dir`; UsageError for none, a damaged file, or two jobs' records.
std::vector<RankRecord> readFolder(const fs::path& given) {
  const fs::path dir = recordsFolder(given);
  const std::regex file("rank_(\\d+)\\.json");
  std::vector<RankRecord> ranks;
  std::map<std::string, std::vector<int>> jobs;  // run id (and round) -> its ranks
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!std::regex_match(entry.path().filename().string(), file)) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(readFile(entry.path().string()));
      ranks.push_back(launch::flight::recordFromJson(j));
      jobs[fmt::format("run {} round {}", j.value("run_id", "?"), j.value("round", -1))].push_back(ranks.back().rank);
    } catch (const nlohmann::json::exception& e) {
      const std::string what = e.what();  // "[json.exception.parse_error.101] parse error at …"
      throw UsageError(fmt::format("{}: not a flight record: {}", entry.path().string(),
                                   what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2)),
                       "it is damaged: read the other ranks' records by moving it away");
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("{}: {}", entry.path().string(), e.what()),
                       "it is damaged: read the other ranks' records by moving it away");
    }
  }
  if (ranks.empty()) {
    throw UsageError(fmt::format("no flight records in {}: it holds no rank_N.json", dir.string()),
                     "name a launch's folder in --log_dir, one of its attempt_N folders, or their flight/ folder");
  }
  if (jobs.size() > 1) {
    std::vector<std::string> parts;
    for (auto& [job, members] : jobs) {
      std::sort(members.begin(), members.end());
      parts.push_back(fmt::format("{} (ranks {})", job, fmt::join(members, ", ")));
    }
    throw UsageError(
        fmt::format("{} holds the records of more than one job or round: {}", dir.string(), fmt::join(parts, "; ")),
        "keep one job's round in a folder");
  }
  std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return ranks;
}

std::string callText(const accel::flight::Call& c) {
  return fmt::format("#{} {}", c.seq, launch::flight::callDescription(c));
}

// "rank 1 (host a, pid 42): completed #5 all_reduce (f32 x 1000) sum; in #6 … for 3.2 s (started)".
std::string rankLine(const RankRecord& r) {
  const std::string who = fmt::format("rank {} (host {}, pid {})", r.rank, r.host, r.pid);
  if (!r.flight) return fmt::format("{}: no record: {}", who, r.missing);
  const auto& calls = r.flight->dump.calls;
  const auto done = std::find_if(calls.rbegin(), calls.rend(),
                                 [](const auto& c) { return c.state == accel::flight::State::Completed; });
  std::string line = fmt::format("{}: {} calls seen; ", who, r.flight->dump.written);
  line += done == calls.rend() ? "none completed" : "completed " + callText(*done);
  for (auto it = calls.rbegin(); it != done; ++it) {
    const int64_t since = it->started_ns ? it->started_ns : it->enqueued_ns;
    line += fmt::format("; {} {} for {:.1f} s", accel::flight::stateName(it->state), callText(*it),
                        static_cast<double>(r.flight->read_ns - since) / 1e9);
  }
  return line;
}

int report(const std::vector<RankRecord>& ranks, const std::string& source, bool as_json) {
  const auto v = launch::flight::judgeFlights(ranks);
  bool all = std::all_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.flight.has_value(); });
  if (as_json) {
    nlohmann::json records = nlohmann::json::array();
    for (const RankRecord& r : ranks) records.push_back(launch::flight::flightJson(r, "", -1));
    std::cout << nlohmann::json{{"source", source}, {"verdict", v.line}, {"mismatch", v.mismatch},
                                {"notes", v.notes}, {"stuck", v.stuck},  {"ranks", records}}
                     .dump()
              << "\n";
    return all ? 0 : 1;
  }
  std::cout << fmt::format("accel fr: {} rank(s), {}\n", ranks.size(), source);
  std::cout << "  " << (v.line.empty() ? "every rank completed the same calls" : v.line) << "\n";
  if (!v.mismatch.empty()) std::cout << "  " << v.mismatch << "\n";
  std::cout << "ranks:\n";
  for (const RankRecord& r : ranks) std::cout << "  " << rankLine(r) << "\n";
  return all ? 0 : 1;
}

}  // namespace

int runFlightRecords(const std::string& target, double timeout_seconds, bool as_json) {
  if (!(timeout_seconds > 0 && timeout_seconds <= launch::job::kMaxStackSeconds)) {
    throw UsageError(fmt::format("--timeout {:g}: not a number of seconds in (0, 600]", timeout_seconds));
  }
  std::error_code ec;
  if (!target.empty() && fs::is_directory(target, ec)) return report(readFolder(target), "from " + target, as_json);
  const launch::stacks::RunningJob job = launch::stacks::selectJob(launch::stacks::findRunningJobs(), target);
  std::string why;
  const auto stacks = askLauncherStacks(job, timeout_seconds, why);
  if (!stacks) {
    throw Error(fmt::format("the launcher of run {} (pid {}) did not answer: {}", job.run_id, job.launcher, why),
                "the flight records live in the launcher's memory: it must be running");
  }
  return report(launch::supervise::flightRecords(*stacks, ""),
                fmt::format("run {}, launcher pid {}", job.run_id, job.launcher), as_json);
}

}  // namespace accel
