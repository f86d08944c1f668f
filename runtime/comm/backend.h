// SPDX-License-Identifier: Apache-2.0
// A communication backend for one group of ranks: asynchronous collectives returning Work.
// Every rank of the group must issue the same collectives in the same order. Buffers must stay
// alive until the Work completes. Methods may be called from any thread (calls are serialised).
#pragma once

#include <vector>

#include "runtime/comm/types.h"
#include "runtime/comm/work.h"

namespace accel {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* name() const = 0;

  // In place on every rank.
  virtual WorkPtr allReduce(Tensor data, ReduceOp op) = 0;
  // `data` of `root` to everyone, in place.
  virtual WorkPtr broadcast(Tensor data, int root) = 0;
  // `output` holds size() * input.count elements, rank r's input at offset r * input.count.
  virtual WorkPtr allGather(Tensor input, Tensor output) = 0;
  // Unequal sizes: rank r contributes counts[r] elements, laid out one after another in `output`.
  virtual WorkPtr allGatherV(Tensor input, Tensor output, std::vector<size_t> counts) = 0;
  // `input` holds size() * output.count elements; rank r gets the reduction of chunk r.
  virtual WorkPtr reduceScatter(Tensor input, Tensor output, ReduceOp op) = 0;
  // `output` (root only) holds size() * input.count elements.
  virtual WorkPtr gather(Tensor input, Tensor output, int root) = 0;
  // `input` (root only) holds size() * output.count elements; rank r gets chunk r.
  virtual WorkPtr scatter(Tensor input, Tensor output, int root) = 0;
  virtual WorkPtr barrier() = 0;

  // This rank will not finish the operation it is in (a part of it that went through another
  // backend failed): peers waiting on it here should fail now, naming it, not at their timeout.
  // A transport whose failures its peers see anyway (a closed socket) need do nothing.
  virtual void abandon() {}
};

}  // namespace accel
