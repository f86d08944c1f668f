// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/flight/arrivals.h"

namespace accel::launch::flight {

void ArrivalCursor::take(const accel::flight::Dump& dump, std::vector<Arrival>& out) {
  std::vector<std::pair<uint64_t, int64_t>> calls;
  for (const auto& call : dump.calls) {
    if (call.group == 0) calls.emplace_back(call.seq, call.enqueued_ns);
  }
  take(dump.rank, dump.pid, calls, out);
}

void ArrivalCursor::take(int rank, long long pid, const std::vector<std::pair<uint64_t, int64_t>>& calls,
                         std::vector<Arrival>& out) {
  Seen& seen = last_[rank];
  if (seen.pid != pid) seen = {pid, 0, false};
  for (const auto& [seq, ns] : calls) {  // oldest first
    if (ns == 0 || (seen.any && seq <= seen.seq)) continue;
    out.push_back({rank, seq, ns});
    seen.seq = seq;
    seen.any = true;
  }
}

}  // namespace accel::launch::flight
