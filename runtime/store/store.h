// SPDX-License-Identifier: Apache-2.0
// The key-value store ranks meet through (rendezvous, Gloo/NCCL bootstrap, barriers).
// Semantics follow PyTorch c10d's Store. Implementations: HashStore (in-process), FileStore
// (shared file system), PrefixStore (namespacing decorator), TCPStore (rank 0 hosts a server).
// Thread-safety: every implementation is safe to call from several threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/common/defaults.h"
#include "lib/common/error.h"

namespace accel {

using Bytes = std::vector<uint8_t>;

// A blocking call ran out of time. The message says what was waited for and where.
class StoreTimeout : public Error {
 public:
  explicit StoreTimeout(const std::string& message, std::string hint = {}) : Error(message, std::move(hint)) {}
};

class Store {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout = defaults::kStoreTimeout;
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Blocks until `key` exists (up to timeout()); throws StoreTimeout naming the key.
  virtual Bytes get(const std::string& key) = 0;
  // Adds `delta` to the integer stored at `key` (a missing key counts as 0); returns the new
  // value. The value is stored as its decimal text, so get() returns e.g. "3".
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // True when every key exists right now. Never blocks.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Blocks until every key exists; throws StoreTimeout naming the missing ones.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout()); }
  // True when the key existed.
  virtual bool deleteKey(const std::string& key) = 0;
  virtual int64_t numKeys() = 0;
  // Atomically: when the key's value equals `expected` (or the key is missing and `expected` is
  // empty), store `desired`. Returns the value the key holds afterwards.
  virtual Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;

  // A second, independent handle on the same store whose calls give up within `limit`, for the
  // questions asked after a failure: they must not wait behind another thread's stuck call, nor
  // for a server whose process is stopped. Throws StoreTimeout or Error when the store does not
  // answer within `limit`. In-process stores (which cannot stop answering) return a view of
  // themselves.
  virtual std::unique_ptr<Store> quickHandle(std::chrono::milliseconds limit);

  void setTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::chrono::milliseconds timeout_ = kDefaultTimeout;
};

// Maintained by the TCPStore server: comma-separated ranks whose connection closed after they
// joined ("1" or "1,3"), so survivors of a failed collective can name who left.
inline constexpr const char* kDepartedRanksKey = "accel/departed_ranks";

// The longest any store waits: a timeout of "forever" is capped to this so that deadlines and
// condition_variable::wait_for cannot overflow the clock.
inline constexpr std::chrono::milliseconds kLongestWait = std::chrono::hours(24 * 365);

inline Bytes toBytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
inline std::string toString(const Bytes& b) { return std::string(b.begin(), b.end()); }

// The semantics every store shares, on the value a key holds now (null: the key is missing).
// add(): the counter there (none, or not a number: 0) plus `delta`, wrapping around at the
// int64 limits.
int64_t addedCounter(const Bytes* current, int64_t delta);
// compareSet() replaces the value when the key is missing and `expected` is empty, or when it
// holds exactly `expected`.
bool compareSetMatches(const Bytes* current, const Bytes& expected);

}  // namespace accel
