// SPDX-License-Identifier: Apache-2.0
// Test support: a test case that cannot run on this machine (no GPU, no NCCL device, no mpirun,
// no gdb, a package missing) is reported as skipped with its reason, never as passed. Under
// CTest, whose tests carry ACCEL_TEST_SKIP_CODE (tests/CMakeLists.txt: the code their
// SKIP_RETURN_CODE reads), the reason is printed and the process ends with that code; run by
// hand (the whole binary at once), the reason is a warning and the case goes on to its return,
// so that the other cases still run.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace accel::test {

inline void skip(const std::string& reason) {
  if (const char* code = std::getenv("ACCEL_TEST_SKIP_CODE")) {
    std::printf("skipped: %s\n", reason.c_str());
    std::fflush(stdout);
    std::exit(std::atoi(code));
  }
  WARN("skipped: " << reason);
}

}  // namespace accel::test
