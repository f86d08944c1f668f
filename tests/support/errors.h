// SPDX-License-Identifier: Apache-2.0
// Tests of code that refuses input: the UsageError a call throws, for a test to read its message
// and hint. Header-only; for Catch2 test files.
#pragma once

#include <catch2/catch.hpp>

#include "lib/common/error.h"

namespace accel::test {

// The UsageError `run` throws; fails the test when it throws none.
template <typename F> UsageError usageError(F run) {
  try {
    run();
  } catch (const UsageError& e) {
    return e;
  }
  FAIL("no UsageError");
  return UsageError("");
}

}  // namespace accel::test
