// SPDX-License-Identifier: Apache-2.0
// What the accelerator holds of a prepared model, whatever wraps it: DDP (ddp.h) or a ZeRO stage
// (zero/sharded_engine.h). The accelerator drives every engine through this interface: forwards,
// gradient sync for accumulation windows, the tensors whose gradients the optimizer steps on
// (clipping and fp16 unscaling act on those), and the optimizer step's before and after.
#pragma once

#include <memory>
#include <tuple>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace accel {

class DdpEngine;

class ModelEngine {
 public:
  virtual ~ModelEngine() = default;

  // Around the module's forward (DataParallel::forward calls them).
  virtual void beforeForward() = 0;
  virtual void afterForward(const std::vector<at::Tensor>& outputs) = 0;
  // Off: backward keeps gradients local (PyTorch's no_sync()).
  virtual void setGradientSync(bool sync) = 0;
  virtual bool gradientSync() const = 0;
  // True when an accumulation window must not turn sync off: the engine reduces every backward
  // into gradients it holds sharded (ZeRO stages 2 and 3, as DeepSpeed and FSDP2 do).
  virtual bool reducesEveryBackward() const { return false; }
  virtual torch::nn::Module& module() const = 0;
  virtual DdpEngine* ddp() { return nullptr; }

  // The tensors whose .grad the optimizer steps on: the parameters, or this rank's shards.
  virtual std::vector<at::Tensor> gradientHolders() const { return module().parameters(); }
  // Each gradient holder's norm over the whole parameter (its shards on every rank). Collective
  // where gradients are sharded.
  virtual std::vector<at::Tensor> gradientNorms(double norm_type);
  // Takes an optimizer built on this module's parameters (sharding engines keep this rank's).
  virtual void adoptOptimizer(torch::optim::Optimizer&) {}
  virtual void beforeOptimizerStep() {}
  virtual void afterOptimizerStep() {}  // collective where parameters are sharded
  virtual void afterZeroGrad() {}
};

// PyTorch's no_sync(): gradient sync off for this scope, restored after.
class NoSync {
 public:
  explicit NoSync(ModelEngine& engine) : engine_(engine), previous_(engine.gradientSync()) {
    engine_.setGradientSync(false);
  }
  ~NoSync() { engine_.setGradientSync(previous_); }
  NoSync(const NoSync&) = delete;
  NoSync& operator=(const NoSync&) = delete;

 private:
  ModelEngine& engine_;
  bool previous_;
};

// The tensors of a forward's result that find_unused_parameters walks back from.
inline std::vector<at::Tensor> forwardOutputs(const at::Tensor& t) { return {t}; }
inline std::vector<at::Tensor> forwardOutputs(const std::vector<at::Tensor>& ts) { return ts; }
template <typename... Ts> std::vector<at::Tensor> forwardOutputs(const std::tuple<Ts...>& ts) {
  std::vector<at::Tensor> out;
  std::apply([&](const auto&... t) { (out.push_back(t), ...); }, ts);
  return out;
}

// A module holder (the TORCH_MODULE type, e.g. `Net`) with an engine around its forward.
// Copies share the module and the engine.
template <typename Holder, typename Engine> class DataParallel {
 public:
  DataParallel(Holder module, std::shared_ptr<Engine> engine)
      : module_(std::move(module)), engine_(std::move(engine)) {}

  template <typename... Args> auto forward(Args&&... args) {
    engine_->beforeForward();
    auto out = module_->forward(std::forward<Args>(args)...);
    engine_->afterForward(forwardOutputs(out));
    return out;
  }
  template <typename... Args> auto operator()(Args&&... args) { return forward(std::forward<Args>(args)...); }

  Holder& module() { return module_; }  // Accelerate's unwrap_model
  auto* operator->() { return module_.get(); }
  Engine& engine() { return *engine_; }
  std::shared_ptr<Engine> sharedEngine() const { return engine_; }
  NoSync noSync() { return NoSync(*engine_); }

 private:
  Holder module_;
  std::shared_ptr<Engine> engine_;
};

}  // namespace accel
