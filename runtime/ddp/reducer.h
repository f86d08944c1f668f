// SPDX-License-Identifier: Apache-2.0
// Bucketed gradient synchronisation, as PyTorch DDP's Reducer does it. A gradient lives in the
// reducer's flat bucket buffer (gradient(i) is a view: backward writes there, no copy), or in the
// caller's own buffer, copied into its bucket when marked ready and the mean copied back by
// finish() (DDP's default, gradient_as_bucket_view=False). f32, fp16 and bf16 gradients; buckets
// never mix types. As each gradient is marked ready it is pre-divided by the world size; a complete bucket's all-reduce
// (sum) is launched asynchronously once every earlier bucket has been launched, so all ranks
// issue the same collectives in the same order while backward goes on. finish() waits for all.
// Gradients in CPU memory (Gloo) or on a CUDA device (NCCL; the pre-division and casts are
// kernels on the legacy default stream, so they follow the backward kernels that wrote the
// gradient). Not thread-safe: one training loop drives it.
#pragma once

#include <string>
#include <vector>

#include "runtime/comm/backend.h"
#include "runtime/ddp/bucket_storage.h"
#include "runtime/ddp/bucketing.h"

namespace accel {

// One parameter's gradient: `count` elements of `dtype` (f32, f16 or bf16) in the reducer's
// memory kind (options.device). `data` null: the reducer holds it; else the caller's buffer.
struct GradientBuffer {
  void* data = nullptr;
  size_t count = 0;
  DataType dtype = DataType::F32;
};

struct ReducerOptions {
  size_t first_bucket_bytes = kDefaultFirstBucketBytes;
  size_t bucket_bytes = kDefaultBucketBytes;
  Compression compression = Compression::None;
  DeviceType device = DeviceType::CPU;  // where the gradients live; CUDA needs a group on that memory (NCCL)
  int device_index = 0;
};

class Reducer {
 public:
  // One gradient per parameter, in registration order. Throws Error for another dtype.
  Reducer(Backend& group, const std::vector<GradientBuffer>& gradients, ReducerOptions options = {});
  // One reducer-held f32 gradient of `counts[i]` elements per parameter.
  Reducer(Backend& group, const std::vector<size_t>& counts, ReducerOptions options = {});

  // Where parameter i's gradient lives (the caller's buffer, or the view into its bucket; valid
  // for the reducer's lifetime; a device pointer when options.device is CUDA). gradient() is
  // for f32 gradients and throws Error for others.
  void* gradientData(size_t i) { return slots_[i].user ? slots_[i].user : slots_[i].view; }
  float* gradient(size_t i);
  size_t count(size_t i) const { return slots_[i].count; }
  const std::vector<Bucket>& buckets() const { return buckets_; }

  // Zeroes every gradient, the caller's buffers too (start of a step, or of an accumulation window).
  void zeroGradients();
  // With sync off (accumulation steps), markReady only records; nothing is reduced.
  void setSync(bool sync) { sync_ = sync; }
  bool sync() const { return sync_; }
  // Parameter i's gradient is final for this step. Throws Error when marked twice.
  void markReady(size_t i);
  // markReady for a reducer-held gradient that the caller wrote already divided by the world
  // size (one pass over it, as DDP's mul_out into the bucket, instead of a copy then a scale).
  void markReadyDivided(size_t i);
  // The parameters not marked ready in this step, in order (a caller names them before finish()).
  std::vector<size_t> unmarked() const;
  // Waits for every bucket; afterwards each gradient holds the mean over ranks. Throws Error
  // naming the parameters never marked ready, CommError when a reduction failed.
  void finish();
  // Buckets launched so far in this step (for tests of overlap).
  size_t launched() const { return next_launch_; }

  // Accumulated since construction: seconds during which any bucket all-reduce was in flight
  // (launch to completion, overlaps counted once) and seconds finish() spent waiting for them. 1 -
  // exposed/communication is the share of communication hidden behind backward.
  struct Timing {
    double communication = 0;
    double exposed = 0;
  };
  const Timing& timing() const { return timing_; }

 private:
  struct Slot {
    void* view = nullptr;  // inside its bucket
    void* user = nullptr;  // the caller's buffer, or null
    size_t count = 0;
    size_t bytes = 0;
    size_t bucket = 0;
  };
  struct BucketState {
    BucketStorage storage;
    size_t pending = 0;  // parameters still to be marked ready; 0: the bucket is complete
    WorkPtr work;
  };
  void markReady(size_t i, bool divided);
  void launchReadyBuckets();
  double busySeconds() const;
  void resetPending();

  Backend& group_;
  ReducerOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<BucketState> state_;
  std::vector<Slot> slots_;
  std::vector<bool> marked_;
  size_t next_launch_ = 0;
  bool sync_ = true;
  Timing timing_;
};

// Rank `root`'s values of every tensor to all ranks (initial parameters), in order.
void broadcastParameters(Backend& group, const std::vector<Tensor>& params, int root = 0);

}  // namespace accel
