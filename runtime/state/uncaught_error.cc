// SPDX-License-Identifier: Apache-2.0
#include "runtime/state/uncaught_error.h"

#include <unistd.h>

#include <cstdio>
#include <exception>

#include "lib/common/error.h"

namespace accel {

namespace {

std::terminate_handler g_previous = nullptr;

[[noreturn]] void onTerminate() {
  if (std::exception_ptr in_flight = std::current_exception()) {
    try {
      std::rethrow_exception(in_flight);
    } catch (const Error& e) {
      std::fprintf(stderr, "accel: error: %s\n", e.what());
      if (!e.hint().empty()) std::fprintf(stderr, "accel: hint: %s\n", e.hint().c_str());
      std::fflush(nullptr);
      ::_exit(static_cast<int>(e.status()));
    } catch (...) {
    }
  }
  if (g_previous) g_previous();
  std::abort();
}

}  // namespace

void reportUncaughtErrors();

namespace {
// Installed when the runtime is loaded, before any program code: an Error thrown before the
// Accelerator exists is reported too.
[[maybe_unused]] const bool g_installed = (reportUncaughtErrors(), true);
}  // namespace

void reportUncaughtErrors() {
  static const bool installed = [] {
    g_previous = std::set_terminate(&onTerminate);
    return true;
  }();
  (void)installed;
}

}  // namespace accel
