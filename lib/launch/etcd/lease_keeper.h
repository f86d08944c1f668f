// SPDX-License-Identifier: Apache-2.0
// Keeps one etcd lease alive from a thread of its own, so that a launcher blocked in a join or a
// round's start still holds the keys that say it is there. Keep-alives go every third of the
// lease's time, each over its own client (etcd_client.h is not shared between threads). Once
// etcd answers that the lease expired, or no keep-alive got through for the lease's whole time,
// lost() turns true and stays so: the keys under the lease are gone, or as good as gone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "lib/launch/etcd/etcd_place.h"

namespace accel::launch::etcd {

class LeaseKeeper {
 public:
  LeaseKeeper(const EtcdPlace& place, long long lease, long long ttl_seconds);
  ~LeaseKeeper();  // stops the thread; the lease is left to its owner (revoke or expiry)
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  bool lost() const { return lost_.load(); }
  // Why it was lost ("" while it is not).
  std::string why() const;

 private:
  void run(EtcdPlace place, long long lease, long long ttl_seconds);

  std::atomic<bool> lost_{false};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::string why_;
  std::thread thread_;
};

}  // namespace accel::launch::etcd
