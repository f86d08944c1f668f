// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/store.h"

#include "lib/common/strings.h"

namespace accel {

namespace {

// Another handle on a store of this process: the same object, seen through a second pointer.
class StoreView final : public Store {
 public:
  explicit StoreView(Store& base) : base_(base) { setTimeout(base.timeout()); }
  void set(const std::string& key, const Bytes& value) override { base_.set(key, value); }
  Bytes get(const std::string& key) override { return base_.get(key); }
  int64_t add(const std::string& key, int64_t delta) override { return base_.add(key, delta); }
  bool check(const std::vector<std::string>& keys) override { return base_.check(keys); }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    base_.wait(keys, timeout);
  }
  using Store::wait;
  bool deleteKey(const std::string& key) override { return base_.deleteKey(key); }
  int64_t numKeys() override { return base_.numKeys(); }
  Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override {
    return base_.compareSet(key, expected, desired);
  }

 private:
  Store& base_;
};

}  // namespace

std::unique_ptr<Store> Store::quickHandle(std::chrono::milliseconds limit) {
  auto view = std::make_unique<StoreView>(*this);
  view->setTimeout(limit);
  return view;
}

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
