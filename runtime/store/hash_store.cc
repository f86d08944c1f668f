// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/hash_store.h"

#include "lib/common/strings.h"

namespace accel {

void HashStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    data_[key] = value;
  }
  changed_.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  wait({key}, timeout());
  std::lock_guard<std::mutex> lock(mutex_);
  return data_.at(key);
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t value = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = data_.find(key);
    value = addedCounter(it == data_.end() ? nullptr : &it->second, delta);
    data_[key] = toBytes(std::to_string(value));
  }
  changed_.notify_all();
  return value;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& k : keys) {
    if (!data_.count(k)) return false;
  }
  return true;
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto all_there = [&] {
    for (const auto& k : keys) {
      if (!data_.count(k)) return false;
    }
    return true;
  };
  if (changed_.wait_for(lock, timeout, all_there)) return;
  std::vector<std::string> missing;
  for (const auto& k : keys) {
    if (!data_.count(k)) missing.push_back(k);
  }
  throw StoreTimeout("store: timed out after " + std::to_string(timeout.count()) + " ms waiting for key(s) " +
                     join(missing, ", "));
}

bool HashStore::deleteKey(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  return data_.erase(key) > 0;
}

int64_t HashStore::numKeys() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(data_.size());
}

Bytes HashStore::compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Bytes result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = data_.find(key);
    if (compareSetMatches(it == data_.end() ? nullptr : &it->second, expected)) {
      data_[key] = desired;
      result = desired;
    } else {
      result = it == data_.end() ? Bytes{} : it->second;
    }
  }
  changed_.notify_all();
  return result;
}

}  // namespace accel
