// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/etcd/lease_keeper.h"

#include <chrono>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/etcd/etcd_client.h"

namespace accel::launch::etcd {

LeaseKeeper::LeaseKeeper(const EtcdPlace& place, long long lease, long long ttl_seconds)
    : thread_([this, place, lease, ttl_seconds] { run(place, lease, ttl_seconds); }) {}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string LeaseKeeper::why() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return why_;
}

void LeaseKeeper::run(EtcdPlace place, long long lease, long long ttl_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto ttl = std::chrono::seconds(ttl_seconds);
  place.call_timeout = std::min<double>(place.call_timeout, static_cast<double>(ttl_seconds) / 3);
  EtcdClient client(place);
  auto signIn = [&client] {
    try {
      client.authenticate();
    } catch (const Error&) {  // the next keep-alive says what is wrong
    }
  };
  signIn();
  auto last_kept = Clock::now();
  std::string why;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_ && why.empty()) {
    wake_.wait_for(lock, ttl / 3, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    try {
      if (client.keepAlive(lease) > 0) {
        last_kept = Clock::now();
      } else {
        why = fmt::format("etcd at {} says its lease expired", client.endpoint());
      }
    } catch (const Error& e) {
      if (Clock::now() - last_kept >= ttl)
        why = fmt::format("no keep-alive reached etcd for {} s: {}", ttl_seconds, e.what());
      signIn();
    }
    lock.lock();
  }
  why_ = why;
  if (!why.empty()) lost_ = true;
}

}  // namespace accel::launch::etcd
