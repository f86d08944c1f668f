// SPDX-License-Identifier: Apache-2.0
// DistributedDataParallel for a libtorch module, with PyTorch DDP's semantics so that results
// can match it bit for bit:
// - at wrap time every rank checks that its parameters and buffers have the shapes and dtypes of
//   every other rank's (an Error names the first that differs, with both shapes), then takes
//   rank 0's values;
// - buffers (BatchNorm statistics) are broadcast from rank 0 before each forward that follows a
//   synchronising one (grad mode on, not under noSync());
// - during backward, a hook on each parameter's gradient accumulator copies the gradient times
//   1/world_size into its bucket as soon as it is final; a full bucket's all-reduce starts while
//   backward goes on (runtime/ddp/reducer.h: PyTorch's bucket assignment, launch order); at the
//   end of backward (an autograd engine callback) every gradient holds the mean over ranks;
// - with find_unused_parameters, the parameters the forward's outputs do not reach count as
//   ready with a zero gradient, and one used by no rank keeps its gradient untouched; without it,
//   a parameter that got no gradient ends backward with an Error naming it.
// Collectives go through the Accelerator's device process group (shared memory or Gloo on CPU,
// NCCL on CUDA); the checks at wrap time through its CPU group. Every rank must wrap the same
// architecture and run the same forward/backward sequence. Not thread-safe: one training loop.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "runtime/ddp/bucketing.h"
#include "runtime/torch/prepared_model.h"

namespace accel {

class Accelerator;
class Reducer;

struct DdpOptions {
  size_t first_bucket_bytes = kDefaultFirstBucketBytes;  // DDP's 1 MiB first bucket
  size_t bucket_bytes = kDefaultBucketBytes;             // bucket_cap_mb = 25
  bool broadcast_buffers = true;
  bool find_unused_parameters = false;
};

// The device-independent part of DistributedDataParallel<M>, on any torch::nn::Module.
class DdpEngine : public ModelEngine {
 public:
  // Verifies shapes across ranks, broadcasts rank 0's parameters and buffers, builds the buckets
  // and installs the hooks. Collective. Throws Error for parameters on another device than the
  // accelerator's, of a dtype the collectives do not carry, or differing between ranks.
  DdpEngine(std::shared_ptr<torch::nn::Module> module, Accelerator& accelerator, DdpOptions options = {});
  ~DdpEngine();
  DdpEngine(const DdpEngine&) = delete;
  DdpEngine& operator=(const DdpEngine&) = delete;

  // Around the module's forward (DistributedDataParallel::forward calls them).
  void beforeForward() override;
  void afterForward(const std::vector<at::Tensor>& outputs) override;

  // Off: backward accumulates local gradients only (PyTorch's no_sync()).
  void setGradientSync(bool sync) override;
  bool gradientSync() const override;
  DdpEngine* ddp() override { return this; }
  // Backward passes whose gradients were reduced, since construction.
  size_t reductions() const;
  // Buckets whose all-reduce had started when the last gradient of the latest synchronising
  // backward arrived: more than 0 means communication overlapped backward.
  size_t launchedBeforeLastGradient() const;
  const Reducer& reducer() const;
  const std::vector<std::string>& parameterNames() const;
  torch::nn::Module& module() const override;

 private:
  struct State;  // shared with the autograd hooks, which outlive nothing: they hold it weakly
  std::shared_ptr<State> state_;
};

// A module holder (the TORCH_MODULE type, e.g. `Net`) wrapped for data-parallel training:
// forward() as the module's, with DDP's work around it. Copies share the wrapped module.
template <typename Holder> class DistributedDataParallel : public DataParallel<Holder, DdpEngine> {
 public:
  DistributedDataParallel(Holder module, Accelerator& accelerator, DdpOptions options = {})
      : DataParallel<Holder, DdpEngine>(module, std::make_shared<DdpEngine>(module.ptr(), accelerator, options)) {}
};

}  // namespace accel
