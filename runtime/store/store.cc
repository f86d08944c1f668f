// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/store.h"

#include "lib/common/strings.h"

namespace accel {

int64_t addedCounter(const Bytes* current, int64_t delta) {
  const int64_t before = current ? parseInt(toString(*current)).value_or(0) : 0;
  // Wraps around at the int64 limits, as c10d's counters do in practice: signed overflow would be
  // undefined behaviour, and any client may send any delta.
  return static_cast<int64_t>(static_cast<uint64_t>(before) + static_cast<uint64_t>(delta));
}

bool compareSetMatches(const Bytes* current, const Bytes& expected) {
  return current ? *current == expected : expected.empty();
}

}  // namespace accel
