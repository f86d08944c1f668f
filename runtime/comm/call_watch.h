// SPDX-License-Identifier: Apache-2.0
// How ranks that call different collectives, and ranks that fail, are found and named: the
// whole story, for every transport. Every call is described the same way first (collective_call.h,
// by the front door in backend.cc), numbered in the group's order by its OpQueue.
//   shared memory   every operation's first step compares the members' fingerprints in the
//                   segment (shm_steps.h): all members notice at the same step and exchange()
//                   their calls below, so each error lists every member's call.
//   Gloo            ranks that differ wait on different tags; once an operation has run a
//                   second, the OpQueue's generic stalled hook lets GlooBackend probe() below,
//                   and a difference ends the operation by shutting the sockets down
//                   (gloo_sockets.h), at the peers too.
//   hierarchical    each part finds its own (shared memory inside a host, the leaders' Gloo
//                   between hosts); every rank reads the leaders' CallWatch's verdict() for
//                   its message.
//   DETAIL          (ACCEL_DEBUG=DETAIL, --debug) CheckedBackend compares every call before it
//                   runs, on any transport, NCCL included (checked_backend.h), with
//                   compareBeforeRunning() below.
// A rank whose part of an operation failed tells the peers waiting for it through its
// transport's abandon() (backend.h): shared memory marks its step, Gloo shuts its sockets, NCCL
// aborts its communicator. After a failure, what the rank learned of the others (lookBack()
// below, shm's peer states) goes to the group's diagnose function (failure_clues.h).
//
// CallWatch, the part that works through the group's store:
// finds, through the group's store, ranks that are waiting in different collectives at the same
// place of their sequence (collective_call.h), and says which rank called what. It costs the
// fast path nothing: a rank consults it only once its operation has waited a while.
//
// probe(): a waiting rank publishes its call once (call/RANK) and counts itself in at/SEQ and
// at/SEQ/FINGERPRINT, always in that order; then, each time, it reads at/SEQ before
// at/SEQ/FINGERPRINT. While every rank at SEQ made the same call the second count is never below
// the first; a rank that made another call at SEQ raises only the first. Two store requests
// per look, whatever the world size. The rank that finds a difference reads every rank's
// call/RANK once and publishes the verdict, which the others read instead of their backend's
// own error (a closed connection says less). Keys stay in the store: two per operation that
// ever waited long enough to be probed.
//
// exchange(): for transports where all ranks notice a difference at the same step (shared
// memory compares fingerprints in every step): each publishes its call for that step and reads
// the others', so the message lists every rank's call.
//
// After a failure (verdict(), lookBack()) it asks through a quick handle of the store
// (store.h), never waiting longer than kLookBack (failure_clues.h).
//
// Thread-safe. Store errors (rank 0, which hosts the store, gone) make it say nothing: the
// operation then fails on its own.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/comm/backend.h"
#include "runtime/comm/collective_call.h"
#include "runtime/comm/failure_clues.h"
#include "runtime/store/prefix_store.h"

namespace accel {

class CallWatch {
 public:
  // `store`: the group's; keys go under "calls/" in a namespace that outlives it (PrefixStore::
  // lasting). `names[r]`: how messages call group rank r (default: r).
  CallWatch(Store& store, int rank, int size, std::vector<int> names = {});

  // `mine` has waited a while (call it again while it still waits). Returns the verdict when
  // ranks' calls differ (this rank's finding or another's), else "".
  std::string probe(const CollectiveCall& mine);
  // A verdict some rank of the group published, or "" (asked within kLookBack).
  std::string verdict();
  // A verdict this rank already knows, or "" (no store request).
  std::string knownVerdict();
  // After operation `seq` failed: the verdict, else the ranks not seen waiting in it (those
  // whose published call is not at `seq`), or that the store did not answer.
  Findings lookBack(uint64_t seq);
  // Every rank noticed at `place` that calls differ: publishes `mine` there, reads the others'
  // (waiting at most `patience` for each), publishes and returns the message.
  std::string exchange(const std::string& place, const CollectiveCall& mine, std::chrono::milliseconds patience);

  // DETAIL's check (checked_backend.h), which needs no store: every rank's `mine` all-gathered
  // over `checker` (a CPU group of the same ranks) before the call runs. Returns the listing of
  // every rank's call when they differ, else "".
  static std::string compareBeforeRunning(Backend& checker, const CollectiveCall& mine);

 private:
  std::string compare(const CollectiveCall& mine);
  std::string publishVerdict(const std::vector<std::optional<CollectiveCall>>& calls);

  std::unique_ptr<PrefixStore> store_;
  int rank_, size_;
  std::vector<int> names_;
  std::mutex mutex_;          // serialises probe, compare and exchange
  uint64_t counted_seq_ = 0;  // the sequence number this rank last counted itself in at
  std::mutex verdict_mutex_;  // guards verdict_ alone: read after a failure without waiting
  std::string verdict_;       // once known

  void setVerdict(const std::string& v);
};

}  // namespace accel
