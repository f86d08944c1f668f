// SPDX-License-Identifier: Apache-2.0
// Test support: `world` threads acting as ranks, each with a Gloo group over one HashStore.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/gloo/gloo_backend.h"
#include "runtime/store/hash_store.h"

namespace accel::test {

// Runs body(rank, group) on every rank, once all are connected; returns each rank's error text ("" when none). Catch2
// assertions inside `body` must come from a single rank: they are not thread-safe.
inline std::vector<std::string> onGlooRanks(int world, const std::function<void(int, Backend&)>& body) {
  HashStore store;
  std::vector<std::string> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GlooBackend group(store, r, world, GlooOptions{});
        // Every rank is connected before any body runs: a body that fails at once would close
        // its pairs while a slower peer is still connecting, and that peer would report
        // "connection closed" from its setup instead of its own error (1 in ~1000 runs).
        group.barrier()->wait();
        body(r, group);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace accel::test
