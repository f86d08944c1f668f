// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/flight/straggler_watch.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace accel::launch::flight {

namespace {

constexpr size_t kSummaryRows = 16;

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

int64_t percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size()))) - (p > 0 ? 1 : 0);
  std::nth_element(values.begin(), values.begin() + static_cast<long>(k), values.end());
  return values[k];
}

// The time covered by the intervals, overlaps counted once.
int64_t covered(std::vector<std::pair<int64_t, int64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, end = INT64_MIN;
  for (const auto& [from, to] : spans) {
    const int64_t start = std::max(from, end);
    if (to > start) total += to - start;
    end = std::max(end, to);
  }
  return total;
}

}  // namespace

StragglerWatch::StragglerWatch(StragglerRule rule, int world) : rule_(rule), world_(std::max(world, 1)) {}

void StragglerWatch::newRound(int world) {
  world_ = std::max(world, 1);
  pending_.clear();
  done_below_.reset();
  window_.clear();
  named_.clear();
}

std::vector<std::string> StragglerWatch::add(const Arrivals& batch, int64_t offset_ns, int64_t now_ns) {
  std::vector<std::string> lines;
  if (rule_.window <= 0) return lines;
  for (const auto& r : batch.ranks) who_[r.rank] = {batch.host, r.pid};
  for (const auto& a : batch.calls) {
    if (a.rank < 0 || a.rank >= world_ || (done_below_ && a.seq < *done_below_)) continue;
    Pending& p = pending_[a.seq];
    if (p.ns.empty()) p.ns.assign(static_cast<size_t>(world_), 0);
    int64_t& slot = p.ns[static_cast<size_t>(a.rank)];
    if (slot != 0) continue;
    slot = a.ns - offset_ns;
    if (slot == 0) slot = 1;
    if (++p.count < world_) continue;
    complete(a.seq, p);
    // Every collective before it that some rank never reached is given up.
    pending_.erase(pending_.begin(), pending_.upper_bound(a.seq));
    done_below_ = a.seq + 1;
  }
  while (pending_.size() > kMaxPending) pending_.erase(pending_.begin());
  report(now_ns, lines);
  return lines;
}

void StragglerWatch::complete(uint64_t, const Pending& p) {
  Judged j;
  const auto last = std::max_element(p.ns.begin(), p.ns.end());
  j.last = static_cast<int>(last - p.ns.begin());
  j.at_last = *last;
  j.first = *std::min_element(p.ns.begin(), p.ns.end());
  j.before_last = j.first;
  for (int r = 0; r < world_; ++r) {
    const int64_t t = p.ns[static_cast<size_t>(r)];
    if (r != j.last) j.before_last = std::max(j.before_last, t);
    auto& kept = lateness_[r];
    kept.push_back(t - j.first);
    if (kept.size() > kLatenessKept) kept.pop_front();
  }
  if (world_ == 1) j.before_last = j.at_last;
  j.margin = j.at_last - j.before_last;
  window_.push_back(j);
  if (window_.size() > static_cast<size_t>(rule_.window)) window_.pop_front();
}

std::optional<StragglerWatch::Verdict> StragglerWatch::judge() const {
  if (world_ < 2 || window_.size() < static_cast<size_t>(rule_.window)) return std::nullopt;
  const auto threshold = static_cast<int64_t>(rule_.lateness * 1e9);
  std::map<int, int> times;
  for (const auto& j : window_) {
    if (j.margin >= threshold) ++times[j.last];
  }
  const auto top =
      std::max_element(times.begin(), times.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top == times.end()) return std::nullopt;
  Verdict v{top->first, top->second, 0, 0};
  std::vector<std::pair<int64_t, int64_t>> waits;
  std::vector<int64_t> margins;
  for (const auto& j : window_) {
    if (j.last != v.rank || j.margin < threshold) continue;
    waits.emplace_back(j.before_last, j.at_last);
    margins.push_back(j.margin);
  }
  const int64_t span = window_.back().at_last - window_.front().first;
  v.waited_share = span > 0 ? static_cast<double>(covered(waits)) / static_cast<double>(span) : 0;
  v.median_margin = percentile(margins, 0.5);
  return v;
}

void StragglerWatch::report(int64_t now_ns, std::vector<std::string>& lines) {
  const auto v = judge();
  const int needed = static_cast<int>(std::ceil(rule_.share * rule_.window - 1e-9));
  const bool is = v && v->times >= needed && v->waited_share >= kTimeShare;
  for (auto it = named_.begin(); it != named_.end();) {
    // Named until it is last at fewer than half as many: a rank near the line is not said twice a second.
    const bool still = v && v->rank == it->first && v->times * 2 >= needed;
    if (still || window_.size() < static_cast<size_t>(rule_.window)) {
      ++it;
      continue;
    }
    lines.push_back(fmt::format("{} is no longer a straggler", who(it->first)));
    it = named_.erase(it);
  }
  if (!is) return;
  ever_[v->rank] = *v;
  auto said = named_.find(v->rank);
  if (said == named_.end()) {
    lines.push_back("straggler: " + describe(*v));
    named_[v->rank] = now_ns;
  } else if (static_cast<double>(now_ns - said->second) >= kRepeatSeconds * 1e9) {
    lines.push_back("still a straggler: " + describe(*v));
    said->second = now_ns;
  }
}

std::string StragglerWatch::who(int rank) const {
  auto it = who_.find(rank);
  if (it == who_.end()) return fmt::format("rank {}", rank);
  return fmt::format("rank {} (host {}, pid {})", rank, it->second.host, it->second.pid);
}

std::string StragglerWatch::describe(const Verdict& v) const {
  return fmt::format(
      "{} came last to {} of the last {} collectives, {:.1f} ms after the rank before it (median); the others "
      "waited for it {:.0f}% of the time",
      who(v.rank), v.times, rule_.window, ms(v.median_margin), v.waited_share * 100);
}

std::vector<std::string> StragglerWatch::summary() const {
  std::vector<std::string> lines;
  if (ever_.empty()) return lines;
  for (const auto& [rank, v] : ever_) lines.push_back("the job's straggler: " + describe(v));
  struct Row {
    int rank;
    int64_t p50, p90, p99, max;
    size_t n;
  };
  std::vector<Row> rows;
  for (const auto& [rank, kept] : lateness_) {
    std::vector<int64_t> values(kept.begin(), kept.end());
    rows.push_back({rank, percentile(values, 0.5), percentile(values, 0.9), percentile(values, 0.99),
                    values.empty() ? 0 : *std::max_element(values.begin(), values.end()), values.size()});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.p90 > b.p90; });
  lines.push_back(fmt::format(
      "lateness after the first rank to arrive, per rank, over its last {} collectives at most (ms: median, "
      "p90, p99, max):",
      kLatenessKept));
  for (size_t i = 0; i < rows.size() && i < kSummaryRows; ++i) {
    const Row& r = rows[i];
    lines.push_back(
        fmt::format("  {}: {:.1f} {:.1f} {:.1f} {:.1f}", who(r.rank), ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max)));
  }
  if (rows.size() > kSummaryRows) {
    lines.push_back(fmt::format("  and {} more ranks, each with p90 at most {:.1f} ms", rows.size() - kSummaryRows,
                                ms(rows[kSummaryRows].p90)));
  }
  return lines;
}

}  // namespace accel::launch::flight
