// SPDX-License-Identifier: Apache-2.0
// Accelerate's Accelerator for libtorch training loops, as its tutorials write them:
//
//   accel::TorchAccelerator accelerator;                    // the launcher's environment
//   auto model = accelerator.prepare(Net());                // to the device, DDP or ZeRO
//   torch::optim::SGD sgd(model->parameters(), 0.05);
//   auto optimizer = accelerator.prepareOptimizer(sgd);
//   auto& loader = accelerator.prepare(images, labels, 64); // this rank's share, batched
//   while (auto batch = loader.next()) {
//     auto scope = accelerator.accumulate();                // gradient accumulation windows
//     auto loss = torch::nn::functional::cross_entropy(model(batch->input), batch->target);
//     accelerator.backward(loss);                           // loss scaling, gradient sync
//     optimizer.step();
//     optimizer.zeroGrad();
//   }
//
// Mixed precision follows ACCELERATE_MIXED_PRECISION (what `accel launch --mixed_precision`
// sets): bf16 autocasts forwards (autocast()), fp16 too and scales the loss with GradScaler's
// rule (runtime/amp/loss_scaler.h). Gradient accumulation follows
// ACCELERATE_GRADIENT_ACCUMULATION_STEPS. The launch's DeepSpeed or FSDP settings choose a ZeRO
// stage (zero/zero_options.h): prepare() then shards the model (zero/sharded_engine.h) and
// prepareOptimizer() its optimizer. Every collective method must be called by every rank
// in the same order. One per process; not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/optim/schedulers/lr_scheduler.h>

#include "runtime/amp/loss_scaler.h"
#include "runtime/metrics/trackers.h"
#include "runtime/state/accelerator.h"
#include "runtime/torch/autocast.h"
#include "runtime/torch/data_loader.h"
#include "runtime/torch/ddp.h"
#include "runtime/torch/prepared_model.h"
#include "runtime/torch/zero/sharded_engine.h"

namespace accel {

struct TorchAcceleratorOptions {
  AcceleratorOptions base;
  DdpOptions ddp;
  LossScalerOptions scaler;             // fp16 only
  SamplerOptions sampler;               // prepared loaders: shuffle, seed, drop_last
  int gradient_accumulation_steps = 0;  // 0: $ACCELERATE_GRADIENT_ACCUMULATION_STEPS, else 1
  std::string log_with;                 // Accelerate's log_with: "jsonl", "tensorboard", "all" ("": none)
  std::string project_dir = ".";
  std::optional<ZeroOptions> zero;  // nullopt: the launch's DeepSpeed/FSDP settings (stage 0: DDP)
};

// What prepare() returns: the module, with DDP or a ZeRO stage around its forward.
template <typename Holder> using PreparedModel = DataParallel<Holder, ModelEngine>;

class TorchAccelerator;

// Accelerate's AcceleratedOptimizer: steps (through the loss scaler under fp16) and zeroes only
// at the end of an accumulation window.
class AcceleratedOptimizer {
 public:
  AcceleratedOptimizer(torch::optim::Optimizer& optimizer, TorchAccelerator& accelerator)
      : optimizer_(&optimizer), accelerator_(&accelerator) {}
  void step();
  void zeroGrad();
  // The last step was skipped: inf/NaN gradients under fp16 (GradScaler's step_was_skipped).
  bool stepWasSkipped() const { return skipped_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }

 private:
  torch::optim::Optimizer* optimizer_;
  TorchAccelerator* accelerator_;
  bool skipped_ = false;
};

// Accelerate's AcceleratedScheduler: steps with the optimizer (not in a skipped or accumulating
// step), once per process as Accelerate does when batches are not split (each process sees
// 1/world of the data, so a schedule written for one process keeps its length in epochs).
// Prepared, a fresh libtorch scheduler counts the step Python's constructor takes, so its
// learning rates change at the steps Python's do (libtorch's StepLR otherwise decays one later).
class AcceleratedScheduler {
 public:
  AcceleratedScheduler(torch::optim::LRScheduler& scheduler, TorchAccelerator& accelerator)
      : scheduler_(&scheduler), accelerator_(&accelerator) {}
  void step();
  torch::optim::LRScheduler& scheduler() { return *scheduler_; }

 private:
  torch::optim::LRScheduler* scheduler_;
  TorchAccelerator* accelerator_;
};

// accumulate(): one micro-step; syncs gradients when a window ends (every N micro-steps, or at
// the end of a prepared loader's epoch, which starts the next epoch's count afresh, as
// Accelerate's GradientState.end_of_dataloader does), else runs backward under no_sync.
class AccumulateScope {
 public:
  explicit AccumulateScope(TorchAccelerator& accelerator);
  ~AccumulateScope();
  AccumulateScope(const AccumulateScope&) = delete;
  AccumulateScope& operator=(const AccumulateScope&) = delete;

 private:
  TorchAccelerator& accelerator_;
};

class TorchAccelerator {
 public:
  explicit TorchAccelerator(TorchAcceleratorOptions options = {});
  ~TorchAccelerator();

  Accelerator& base() { return base_; }
  at::Device device() const { return device_; }
  int processIndex() const { return base_.processIndex(); }
  int numProcesses() const { return base_.numProcesses(); }
  bool isMainProcess() const { return base_.isMainProcess(); }
  bool isLocalMainProcess() const { return base_.isLocalMainProcess(); }
  const std::string& mixedPrecision() const { return base_.mixedPrecision(); }
  int gradientAccumulationSteps() const { return accumulation_steps_; }
  const ZeroOptions& zeroOptions() const { return zero_; }
  void print(const std::string& line) const { base_.print(line); }
  void waitForEveryone() { base_.waitForEveryone(); }

  // The model on the device, wrapped in DDP or sharded by the ZeRO stage of zeroOptions()
  // (every rank; collective). Refuses fp16 on a CPU whose libtorch has no fp16 CPU autocast, and
  // a model already on another device.
  template <typename Holder>
  requires requires(Holder h) { h.ptr(); }  // a TORCH_MODULE holder
  PreparedModel<Holder> prepare(Holder model) {
    placeModel(*model.ptr());
    std::shared_ptr<ModelEngine> engine = makeEngine(model.ptr());
    models_.push_back(engine);
    return PreparedModel<Holder>(std::move(model), std::move(engine));
  }
  // Prepared after the model: under a ZeRO stage each rank keeps the state of its shards only.
  // Throws Error for what the stage cannot shard (LBFGS; an optimizer that already stepped).
  AcceleratedOptimizer prepareOptimizer(torch::optim::Optimizer& optimizer);
  AcceleratedScheduler prepareScheduler(torch::optim::LRScheduler& scheduler);
  // This rank's batches of (inputs, targets), in DistributedSampler order (options().sampler).
  TensorLoader& prepare(at::Tensor inputs, at::Tensor targets, size_t batch_size);

  // loss.backward(), divided by the accumulation steps and scaled under fp16.
  void backward(const at::Tensor& loss);
  AccumulateScope accumulate() { return AccumulateScope(*this); }
  // The forward's mixed precision (torch.autocast with this run's dtype; nothing under "no").
  AutocastScope autocast() const;
  // Whether this micro-step ends an accumulation window (Accelerate's sync_gradients).
  bool syncGradients() const { return sync_gradients_; }
  // Unscales (fp16) and clips every prepared model's gradients: torch.nn.utils.clip_grad_norm_.
  // Returns the total norm before clipping. After backward, gradients are equal on every rank.
  // Inside an accumulation window (syncGradients() false) it does nothing, returns 0 and says
  // so once: the gradients are partial there.
  double clipGradNorm(double max_norm, double norm_type = 2.0);

  // Every rank's tensor, concatenated along dimension 0 in rank order. Collective.
  at::Tensor gather(const at::Tensor& tensor);
  // Every rank's values for `loader`'s latest batch (one row per sample), without the samples
  // its sampler padded the epoch with, in the sampler's order. Collective. Without a loader: the
  // last one prepared.
  at::Tensor gatherForMetrics(const at::Tensor& tensor, const TensorLoader& loader);
  at::Tensor gatherForMetrics(const at::Tensor& tensor);

  // Accelerate's save_state / load_state: models, optimizers, schedulers, loss scaler, RNG
  // states and loader positions, through runtime/checkpoint (agreement, lock, atomic commit).
  // `step`: the caller's step count, returned by loadState. Collective. A checkpoint of another
  // world size (machines came or went) loads: the models and optimizers are the same on every
  // rank, rank r takes rank r mod N's random states, each loader resumes at the same global
  // sample (checkpoint_resume.h, data_loader.h).
  std::string saveState(const std::string& dir, int64_t step);
  std::optional<int64_t> loadState(const std::string& dir);  // nullopt: no checkpoint there
  // The whole model and optimizers' state in one file Python's torch.load reads with its default
  // weights_only=True (state_export.h), written by the main process. Collective.
  void exportState(const std::string& path);

  // Trackers (log_with) on the main process; no-ops elsewhere.
  void initTrackers(const std::string& project, const TrackerConfig& config = {});
  void log(const std::map<std::string, double>& values, int64_t step);

  LossScaler& scaler() { return scaler_; }

 private:
  friend class AcceleratedOptimizer;
  friend class AcceleratedScheduler;
  friend class AccumulateScope;
  void placeModel(torch::nn::Module& model);
  std::shared_ptr<ModelEngine> makeEngine(std::shared_ptr<torch::nn::Module> module);
  void unscaleGradients();
  void beginMicroStep();
  void endMicroStep();
  void optimizerStepped();
  std::vector<at::Tensor> parameters() const;

  TorchAcceleratorOptions options_;
  Accelerator base_;
  at::Device device_;
  int accumulation_steps_ = 1;
  LossScaler scaler_;
  ZeroOptions zero_;
  std::vector<std::shared_ptr<ModelEngine>> models_;
  std::vector<torch::optim::Optimizer*> optimizers_;
  std::vector<torch::optim::LRScheduler*> schedulers_;
  std::vector<std::unique_ptr<TensorLoader>> loaders_;
  std::unique_ptr<Trackers> trackers_;
  int64_t micro_step_ = 0;
  bool sync_gradients_ = true;
  bool synced_since_step_ = false;  // a synchronising backward ran since the last optimizer step
  bool unscaled_ = false;           // this step's gradients are already unscaled (clipGradNorm)
  bool said_partial_clip_ = false;  // clipGradNorm inside a window was said to do nothing
  bool skipped_ = false;            // the last optimizer step was skipped (inf/NaN under fp16)
};

}  // namespace accel
