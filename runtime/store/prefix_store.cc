// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/prefix_store.h"

namespace accel {

PrefixStore::PrefixStore(std::string prefix, Store& base) : prefix_(std::move(prefix)), base_(base) {
  setTimeout(base.timeout());
}

PrefixStore::PrefixStore(std::string prefix, std::unique_ptr<Store> owned)
    : owned_(std::move(owned)), prefix_(std::move(prefix)), base_(*owned_) {
  setTimeout(base_.timeout());
}

std::unique_ptr<Store> PrefixStore::quickHandle(std::chrono::milliseconds limit) {
  return std::unique_ptr<Store>(new PrefixStore(prefix_, base_.quickHandle(limit)));
}

std::unique_ptr<PrefixStore> PrefixStore::lasting(std::string prefix, Store& base) {
  Store* root = &base;
  while (auto* p = dynamic_cast<PrefixStore*>(root)) {
    prefix = p->prefix_ + "/" + prefix;
    root = &p->base_;
  }
  auto made = std::make_unique<PrefixStore>(std::move(prefix), *root);
  made->setTimeout(base.timeout());
  return made;
}

std::vector<std::string> PrefixStore::joined(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(joined(k));
  return out;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { base_.set(joined(key), value); }
// The wait applies this store's own timeout; the base's get() would block with the base's.
Bytes PrefixStore::get(const std::string& key) {
  base_.wait({joined(key)}, timeout());
  return base_.get(joined(key));
}
int64_t PrefixStore::add(const std::string& key, int64_t delta) { return base_.add(joined(key), delta); }
bool PrefixStore::check(const std::vector<std::string>& keys) { return base_.check(joined(keys)); }
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  base_.wait(joined(keys), timeout);
}
bool PrefixStore::deleteKey(const std::string& key) { return base_.deleteKey(joined(key)); }
int64_t PrefixStore::numKeys() { return base_.numKeys(); }
Bytes PrefixStore::compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return base_.compareSet(joined(key), expected, desired);
}

}  // namespace accel
