// SPDX-License-Identifier: Apache-2.0
// Namespacing decorator: every key becomes "<prefix>/<key>" in the wrapped store, so process
// groups and runs sharing one store never see each other's keys. Thread-safe if the base is.
// Does not own the base store, which must outlive it (but the quick handle it makes owns its own).
#pragma once

#include <memory>

#include "runtime/store/store.h"

namespace accel {

class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, Store& base);
  // The same namespace as PrefixStore(prefix, base), but on the first store under `base` that is
  // not a PrefixStore: it stays valid after `base` itself (a scope's PrefixStore) is gone, for
  // as long as that store lives. Its timeout is `base`'s.
  static std::unique_ptr<PrefixStore> lasting(std::string prefix, Store& base);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  using Store::wait;
  bool deleteKey(const std::string& key) override;
  int64_t numKeys() override;  // of the whole base store (c10d semantics)
  Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  // The same namespace on the base's quick handle.
  std::unique_ptr<Store> quickHandle(std::chrono::milliseconds limit) override;

 private:
  PrefixStore(std::string prefix, std::unique_ptr<Store> owned);
  std::unique_ptr<Store> owned_;  // the base, when this store owns it (a quick handle's)
  std::string joined(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> joined(const std::vector<std::string>& keys) const;
  std::string prefix_;
  Store& base_;
};

}  // namespace accel
