// SPDX-License-Identifier: Apache-2.0
// ZeRO for a libtorch module: the optimizer state (stage 1), the gradients too (stage 2) and the
// parameters too (stage 3) held by shards, each rank its own rows of every parameter
// (shard_layout.h), as torch's ZeroRedundancyOptimizer, FSDP2's fully_shard and DeepSpeed do.
//
// - Stage 1: gradients are DDP's (ddp.h: the same buckets, all-reduce and results); the optimizer
//   steps on this rank's rows only, then each unit's rows are all-gathered into the parameters.
// - Stage 2: during backward, as soon as every parameter of a unit has its gradient, the unit's
//   gradients (times 1/world, as DDP's) are reduce-scattered: each rank keeps its rows' sum and
//   frees the whole gradient. Every backward reduces (an accumulation window adds its micro-steps'
//   reduced gradients, as DeepSpeed and FSDP2 under Accelerate do); noSync() keeps whole local
//   gradients instead, reduced by the next synchronising backward.
// - Stage 3: the parameters' memory is released at rest; an operator about to read one gathers
//   its unit (gather_on_use.h), in forward and again in backward. Gathering a unit in forward
//   releases the previous unit (the root unit, the parameters of no unit, stays until the end
//   of backward); a unit's gradients reduced in backward release it. noSync() is an Error.
//
// Parameters must be contiguous tensors owning their whole storage, each unit of one dtype; buffers
// are broadcast from rank 0 before a synchronising forward, as DDP's. Shards live on the device,
// or in host memory when offloading from a CUDA device (then the optimizer steps on the CPU); on
// the CPU offloading changes nothing. Every rank must run the same forward/backward sequence.
// Collectives go through the Accelerator's device process group. Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/torch/ddp.h"
#include "runtime/torch/prepared_model.h"
#include "runtime/torch/zero/shard_layout.h"
#include "runtime/torch/zero/zero_options.h"

namespace accel {

class Accelerator;

class ShardedEngine : public ModelEngine {
 public:
  // Checks the module as DDP does, takes rank 0's parameters and buffers, shards them (stage 3:
  // releases them) and installs the gradient hooks. Collective. Throws Error for stage 0 or > 3,
  // a parameter two modules share under stage 3, or parameters that cannot be sharded.
  ShardedEngine(std::shared_ptr<torch::nn::Module> module, Accelerator& accelerator, ZeroOptions zero,
                DdpOptions ddp = {});
  ~ShardedEngine() override;
  ShardedEngine(const ShardedEngine&) = delete;
  ShardedEngine& operator=(const ShardedEngine&) = delete;

  void beforeForward() override;
  void afterForward(const std::vector<at::Tensor>& outputs) override;
  void setGradientSync(bool sync) override;
  bool gradientSync() const override;
  bool reducesEveryBackward() const override;
  torch::nn::Module& module() const override;
  DdpEngine* ddp() override;
  std::vector<at::Tensor> gradientHolders() const override;
  std::vector<at::Tensor> gradientNorms(double norm_type) override;
  // Replaces the optimizer's parameters of this module by this rank's shards (another module's
  // stay). Throws Error for an optimizer that already stepped or needs whole parameters (LBFGS).
  void adoptOptimizer(torch::optim::Optimizer& optimizer) override;
  void beforeOptimizerStep() override;
  void afterOptimizerStep() override;
  void afterZeroGrad() override;

  // Without the accelerator: the optimizer's step between the two above. Collective.
  void step(torch::optim::Optimizer& optimizer);

  int stage() const;
  const ShardLayout& layout() const;
  // This rank's shard of each parameter, in layout order (its rows; owned by the engine).
  const std::vector<at::Tensor>& shards() const;
  int rank() const;
  int world() const;
  // Parameter i whole, as a new tensor on the CPU. Collective.
  at::Tensor wholeParameter(size_t i) { return wholeRows(i, shards()[i]); }
  // Every rank's `rows` (this rank's rows of something shaped as parameter i: its shard, an
  // optimizer's state of it) joined into one tensor of the parameter's shape, on the CPU. Collective.
  at::Tensor wholeRows(size_t i, const at::Tensor& rows);
  // The shards were written (a checkpoint loaded): stages 1-2 gather them into the parameters
  // (collective), stage 3 releases whatever was gathered.
  void afterLoad();
  // Units gathered (stage 3) and gradients reduced since construction. Once the engine is gone,
  // stage 3's parameters stay released: take them with wholeParameter() first.
  size_t gathers() const;
  size_t reductions() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// A module holder wrapped by a ZeRO stage, used without the accelerator.
template <typename Holder> class ShardedDataParallel : public DataParallel<Holder, ShardedEngine> {
 public:
  ShardedDataParallel(Holder module, Accelerator& accelerator, ZeroOptions zero, DdpOptions ddp = {})
      : DataParallel<Holder, ShardedEngine>(module,
                                            std::make_shared<ShardedEngine>(module.ptr(), accelerator, zero, ddp)) {}
};

}  // namespace accel
