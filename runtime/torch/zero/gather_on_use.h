// SPDX-License-Identifier: Apache-2.0
// Stage 3's trigger: libtorch modules have no forward hooks, so a released parameter is gathered
// when an operator is about to read it. An observer on every operator (ATen's RecordFunction,
// the profiler's entry point, before autograd and the kernel) looks up each input tensor's
// storage; a registered storage calls its owner's gather first. Views share their base's
// storage, so a transposed weight autograd saved for backward triggers it too. A storage is
// registered while its memory may be released and removed before the tensor goes away.
//
// The callback runs on whichever thread runs the operator (the autograd engine's included);
// `gather` runs outside the registry's lock, and operators it runs itself are not observed.
#pragma once

#include <cstddef>

namespace c10 {
struct StorageImpl;
}

namespace accel {

class GatherTarget {
 public:
  virtual ~GatherTarget() = default;
  // Makes unit `unit`'s parameters whole; an exception propagates into the operator.
  virtual void gatherForUse(size_t unit) = 0;
};

void registerGatherOnUse(const c10::StorageImpl* storage, GatherTarget* target, size_t unit);
void unregisterGatherOnUse(const GatherTarget* target);

// Operators run inside this scope (on this thread) are not observed: the gather's own copies.
class GatherOnUsePause {
 public:
  GatherOnUsePause();
  ~GatherOnUsePause();
  GatherOnUsePause(const GatherOnUsePause&) = delete;
  GatherOnUsePause& operator=(const GatherOnUsePause&) = delete;

 private:
  bool previous_;
};

}  // namespace accel
