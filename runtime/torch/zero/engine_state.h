// SPDX-License-Identifier: Apache-2.0
// ShardedEngine's state, shared by its files: sharded_engine.cc (construction, forward, the
// optimizer), unit_memory.cc (gathering and releasing units), sharded_gradients.cc (backward's
// reduce-scatter). Internal to the component.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/comm/backend.h"
#include "runtime/torch/ddp_checks.h"
#include "runtime/torch/zero/gather_on_use.h"
#include "runtime/torch/zero/sharded_engine.h"

namespace accel {

struct UnitState {
  bool gathered = true;          // its parameters hold their values (stage 3 releases them)
  size_t ready = 0;              // parameters whose gradient arrived in this backward
  bool reducing = false;         // its reduce-scatter was launched in this backward
  at::Tensor send{}, receive{};  // the reduce-scatter's buffers while it runs
  WorkPtr work{};
};

struct ShardedEngine::State : GatherTarget {
  std::shared_ptr<torch::nn::Module> module;
  ZeroOptions zero;
  at::Device device{at::kCPU};
  at::Device shard_device{at::kCPU};
  Backend* data = nullptr;     // gradients, parameters, buffers: the accelerator's device group
  Backend* control = nullptr;  // its CPU group
  int rank = 0, world = 1;
  ShardLayout layout;
  std::vector<at::Tensor> shards;
  std::vector<at::Tensor> buffers;
  std::unique_ptr<DdpEngine> ddp;  // stage 1's gradients
  std::vector<UnitState> units;
  std::vector<GradAccumulatorPtr> accumulators;
  std::vector<size_t> in_flight;  // units whose reduce-scatter was launched, in launch order
  at::Tensor inverse_world;
  bool own_shards = false;  // shards have their own memory (stage 3, or offloaded), else views
  bool gradient_sync = true;
  bool forward_param_sync = true;
  bool armed = false;
  bool in_backward = false;
  bool in_forward = false;
  size_t gathers = 0, reductions = 0;

  // unit_memory.cc
  void gatherForUse(size_t unit) override;
  void gatherUnit(size_t unit);  // every rank's rows into the parameters (allocating if released)
  void releaseUnit(size_t unit);
  void releaseAll();
  at::Tensor packShards(size_t unit) const;
  void shardParameters();

  // sharded_gradients.cc
  void hook(size_t i, const std::weak_ptr<State>& self);
  void onGradient(size_t i, const std::weak_ptr<State>& self);
  void launchReduce(size_t unit);
  void completeReduce(size_t unit);
  void finishBackward();
  std::vector<at::Tensor> shardNorms(double norm_type);
};

}  // namespace accel
