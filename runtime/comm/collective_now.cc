// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/collective_now.h"

#include <cstdio>
#include <mutex>

extern "C" {
__attribute__((used, visibility("default"))) char accel_collective_now[256] = "";
}

namespace accel {

namespace {
std::mutex& noteLock() {
  static std::mutex lock;
  return lock;
}
}  // namespace

void noteCollective(bool running, const std::string& numbered, const std::string& label) {
  std::lock_guard<std::mutex> hold(noteLock());
  std::snprintf(accel_collective_now, sizeof accel_collective_now, "%s %s%s%s", running ? "in" : "after",
                numbered.c_str(), label.empty() ? "" : ", ", label.c_str());
}

}  // namespace accel
