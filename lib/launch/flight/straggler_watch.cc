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

void StragglerWatch::Lateness::add(int64_t ns) {
  const double at =
      ns <= 0 ? 0 : std::log10(static_cast<double>(ns) / static_cast<double>(kLatenessFloorNs)) * kBucketsPerDecade;
  const auto bucket = static_cast<size_t>(std::clamp(std::ceil(at), 0.0, static_cast<double>(kLatenessBuckets - 1)));
  ++counts[bucket];
  ++n;
  max = std::max(max, ns);
}

int64_t StragglerWatch::Lateness::percentile(double p) const {
  const auto rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(n)));
  uint64_t seen = 0;
  for (size_t b = 0; b < kLatenessBuckets; ++b) {
    seen += counts[b];
    if (seen >= std::max<uint64_t>(rank, 1)) {
      const double edge =
          static_cast<double>(kLatenessFloorNs) * std::pow(10.0, static_cast<double>(b) / kBucketsPerDecade);
      return std::min(max, static_cast<int64_t>(edge));
    }
  }
  return max;
}

StragglerWatch::StragglerWatch(StragglerRule rule, int world) : rule_(rule), world_(std::max(world, 1)) {}

void StragglerWatch::newRound(int world) {
  world_ = std::max(world, 1);
  pending_.clear();
  done_below_.reset();
  window_.clear();
  named_.clear();
}

size_t StragglerWatch::maxPending() const {
  return std::clamp<size_t>(kMaxPendingBytes / (static_cast<size_t>(world_) * sizeof(int64_t)), 16, 4096);
}

std::vector<std::string> StragglerWatch::add(const Arrivals& batch, int64_t offset_ns, int64_t now_ns) {
  std::vector<std::string> lines;
  if (rule_.window <= 0) return lines;
  for (const auto& r : batch.ranks) {
    if (r.rank >= 0 && r.rank < world_) who_[r.rank] = {batch.host, r.pid};
  }
  for (const auto& a : batch.calls) {
    if (a.rank < 0 || a.rank >= world_ || (done_below_ && a.seq < *done_below_)) continue;
    Pending& p = pending_[a.seq];
    if (p.ns.empty()) p.ns.assign(static_cast<size_t>(world_), 0);
    int64_t& slot = p.ns[static_cast<size_t>(a.rank)];
    if (slot != 0) continue;
    slot = a.ns - offset_ns;
    if (slot == 0) slot = 1;
    if (++p.count < world_) continue;
    complete(p);
    // Every collective before it that some rank never reached is given up.
    pending_.erase(pending_.begin(), pending_.upper_bound(a.seq));
    done_below_ = a.seq + 1;
  }
  while (pending_.size() > maxPending()) pending_.erase(pending_.begin());
  report(now_ns, lines);
  return lines;
}

void StragglerWatch::complete(const Pending& p) {
  Judged j;
  const auto last = std::max_element(p.ns.begin(), p.ns.end());
  j.last = static_cast<int>(last - p.ns.begin());
  j.at_last = *last;
  j.first = *std::min_element(p.ns.begin(), p.ns.end());
  j.before_last = j.first;
  for (int r = 0; r < world_; ++r) {
    const int64_t t = p.ns[static_cast<size_t>(r)];
    if (r != j.last) j.before_last = std::max(j.before_last, t);
    lateness_[r].add(t - j.first);
  }
  if (world_ == 1) j.before_last = j.at_last;
  j.margin = j.at_last - j.before_last;
  window_.push_back(j);
  if (window_.size() > static_cast<size_t>(rule_.window)) window_.pop_front();
}

std::map<int, StragglerWatch::Verdict> StragglerWatch::judge() const {
  std::map<int, Verdict> out;
  if (world_ < 2 || window_.size() < static_cast<size_t>(rule_.window)) return out;
  const auto threshold = static_cast<int64_t>(rule_.lateness * 1e9);
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> waits;
  std::map<int, std::vector<int64_t>> margins;
  for (const auto& j : window_) {
    if (j.margin < threshold) continue;
    waits[j.last].emplace_back(j.before_last, j.at_last);
    margins[j.last].push_back(j.margin);
  }
  const int64_t span = window_.back().at_last - window_.front().first;
  for (const auto& [rank, gaps] : waits) {
    Verdict v{rank, static_cast<int>(gaps.size()), 0, percentile(margins[rank], 0.5)};
    v.waited_share = span > 0 ? static_cast<double>(covered(gaps)) / static_cast<double>(span) : 0;
    out[rank] = v;
  }
  return out;
}

void StragglerWatch::report(int64_t now_ns, std::vector<std::string>& lines) {
  if (window_.size() < static_cast<size_t>(rule_.window)) return;
  const auto verdicts = judge();
  const int needed = static_cast<int>(std::ceil(rule_.share * rule_.window - 1e-9));
  for (auto it = named_.begin(); it != named_.end();) {
    // Named until it is last at fewer than half as many: a rank near the line is not said twice a second.
    const auto v = verdicts.find(it->first);
    if (v != verdicts.end() && v->second.times * 2 >= needed) {
      ++it;
      continue;
    }
    lines.push_back(fmt::format("{} is no longer a straggler", who(it->first)));
    it = named_.erase(it);
  }
  for (const auto& [rank, v] : verdicts) {
    if (v.times < needed || v.waited_share < kTimeShare) continue;
    ever_[rank] = v;
    auto said = named_.find(rank);
    if (said == named_.end()) {
      lines.push_back("straggler: " + describe(v));
      named_[rank] = now_ns;
    } else if (static_cast<double>(now_ns - said->second) >= kRepeatSeconds * 1e9) {
      lines.push_back("still a straggler: " + describe(v));
      said->second = now_ns;
    }
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
  };
  std::vector<Row> rows;
  for (const auto& [rank, l] : lateness_) {
    rows.push_back({rank, l.percentile(0.5), l.percentile(0.9), l.percentile(0.99), l.max});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.p90 > b.p90; });
  lines.push_back(
      "lateness after the first rank to arrive, per rank, over the job (ms: median, p90, p99 to within 12%; max):");
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
