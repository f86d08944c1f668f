// SPDX-License-Identifier: Apache-2.0
#include "lib/common/call_names.h"

#include <iterator>

#include <fmt/format.h>

namespace accel::calls {

namespace {
template <size_t N> const char* pick(const char* const (&names)[N], unsigned code) {
  return code < N ? names[code] : "?";
}
constexpr unsigned kAllReduce = 0, kBroadcast = 1, kReduceScatter = 4, kGather = 5, kScatter = 6, kAllToAllV = 8,
                   kBarrier = 9;
static_assert(std::size(kKindNames) == kBarrier + 1);
}  // namespace

const char* kindName(unsigned kind) { return pick(kKindNames, kind); }
const char* dtypeName(unsigned dtype) { return pick(kDtypeNames, dtype); }
const char* reduceOpName(unsigned op) { return pick(kReduceOpNames, op); }

std::string describeCall(unsigned kind, unsigned dtype, uint64_t count, unsigned op, int root) {
  if (kind == kBarrier) return "barrier";
  if (kind == kAllToAllV) return fmt::format("{} ({})", kindName(kind), dtypeName(dtype));
  std::string text = fmt::format("{} ({} x {})", kindName(kind), dtypeName(dtype), count);
  // A recorder that does not note the reduce operation (torch's) gives no code of ours.
  if ((kind == kAllReduce || kind == kReduceScatter) && op < std::size(kReduceOpNames)) {
    return text + " " + reduceOpName(op);
  }
  if (kind == kBroadcast || kind == kScatter) return text + fmt::format(" from rank {}", root);
  if (kind == kGather) return text + fmt::format(" to rank {}", root);
  return text;
}

}  // namespace accel::calls
