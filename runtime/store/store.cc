// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/store.h"

#include "lib/common/strings.h"

namespace accel {

int64_t addedCounter(const Bytes* current, int64_t delta) {
  return (current ? parseInt(toString(*current)).value_or(0) : 0) + delta;
}

bool compareSetMatches(const Bytes* current, const Bytes& expected) {
  return current ? *current == expected : expected.empty();
}

}  // namespace accel
