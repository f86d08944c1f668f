// SPDX-License-Identifier: Apache-2.0
// Which rank the others wait for, judged live on the launcher that judges the job (machine 0):
// the arrivals of every rank (arrivals.h), on this launcher's clock, are put together per
// collective of group 0; once every rank of the world arrived at one, the last to come and by how
// much it was last (after the one before it) are noted, and each rank's lateness after the first.
// A rank is a straggler when, over the last `window` collectives, it was last by at least
// `lateness` seconds at `share` of them or more, and the others waited for it (the union of those
// gaps) at least kTimeShare of the window's time: a rank that is rarely last, or last by little,
// or in a job whose collectives are far apart next to its delay, is not named. Several ranks can
// be named at once where the share allows it.
// Lines say it when a rank becomes one, at most every kRepeatSeconds while it stays one, and when
// it no longer is (last at fewer than half as many); summary() gives the job's stragglers and
// every rank's lateness percentiles over the whole job.
// Memory: a window of `window` entries, kLatenessBuckets counters per rank, and collectives some
// rank has not reached yet, given up past kMaxPendingBytes. Single-threaded.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/flight/arrivals.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::flight {

using StragglerRule = plan::StragglerRule;

inline constexpr double kTimeShare = 0.05;
inline constexpr double kRepeatSeconds = 60;
inline constexpr size_t kMaxPendingBytes = 64u << 20;
// A rank's latenesses as counts in logarithmic buckets, kBucketsPerDecade to a factor of ten,
// from kLatenessFloorNs up (the first holds what is below it, the last what is beyond the rest):
// a percentile is right to within one bucket's width.
inline constexpr int kBucketsPerDecade = 20;
inline constexpr int64_t kLatenessFloorNs = 10'000;
inline constexpr size_t kLatenessBuckets = 9 * kBucketsPerDecade + 2;

class StragglerWatch {
 public:
  StragglerWatch(StragglerRule rule, int world);

  // A machine's batch, its times moved onto this launcher's clock by subtracting `offset_ns`;
  // `now_ns` on this clock. Returns the lines to say now (the caller adds "accel: ").
  std::vector<std::string> add(const Arrivals& batch, int64_t offset_ns, int64_t now_ns);
  // A new round (its process groups number their collectives from the start): `world` ranks.
  void newRound(int world);
  // The job's stragglers and every rank's lateness percentiles; empty when none was named.
  std::vector<std::string> summary() const;
  // Whether `rank` is named now.
  bool named(int rank) const { return named_.count(rank) > 0; }

 private:
  struct Pending {
    std::vector<int64_t> ns;  // by rank; 0: not yet
    int count = 0;
  };
  struct Judged {
    int last = -1;       // the rank that came last
    int64_t margin = 0;  // after the one before it
    int64_t first = 0, before_last = 0, at_last = 0;
  };
  struct Who {
    std::string host;
    long long pid = 0;
  };
  struct Verdict {
    int rank = -1;
    int times = 0;              // last by the threshold, of the window
    double waited_share = 0;    // of the window's time
    int64_t median_margin = 0;  // of those times
  };
  struct Lateness {
    std::array<uint32_t, kLatenessBuckets> counts{};
    uint64_t n = 0;
    int64_t max = 0;
    void add(int64_t ns);
    int64_t percentile(double p) const;  // the bucket's upper edge, at most the largest seen
  };

  void complete(const Pending& p);
  std::map<int, Verdict> judge() const;  // every rank last by the threshold in the window
  void report(int64_t now_ns, std::vector<std::string>& lines);
  std::string describe(const Verdict& v) const;
  std::string who(int rank) const;
  size_t maxPending() const;

  StragglerRule rule_;
  int world_;
  std::map<uint64_t, Pending> pending_;
  std::optional<uint64_t> done_below_;  // collectives below it were judged or given up
  std::deque<Judged> window_;
  std::map<int, Who> who_;
  std::map<int, Lateness> lateness_;  // by rank, after the first to arrive
  std::map<int, int64_t> named_;      // rank -> when last said
  std::map<int, Verdict> ever_;       // every rank named, as it was last named
};

}  // namespace accel::launch::flight
