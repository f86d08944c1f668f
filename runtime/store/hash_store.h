// SPDX-License-Identifier: Apache-2.0
// In-process store: threads as ranks in tests, and the world of one. Thread-safe.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "runtime/store/store.h"

namespace accel {

class HashStore : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  using Store::wait;
  bool deleteKey(const std::string& key) override;
  int64_t numKeys() override;
  Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes> data_;
};

}  // namespace accel
