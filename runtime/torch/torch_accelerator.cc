// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/torch_accelerator.h"

#include <iostream>
#include <numeric>

#include <fmt/format.h>
#include <torch/torch.h>

#include "lib/common/error.h"
#include "runtime/ddp/reducer.h"
#include "runtime/metrics/trackers.h"
#include "runtime/torch/scheduler_steps.h"
#include "runtime/torch/tensor_view.h"
#include "runtime/torch/torch_version.h"

namespace accel {

namespace {

at::Device torchDevice(const Device& device) {
  return device.type == DeviceType::CUDA ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device.index))
                                         : at::Device(at::kCPU);
}

c10::ScalarType precisionDtype(const std::string& mixed_precision) {
  return mixed_precision == "fp16" ? at::kHalf : at::kBFloat16;
}

at::Tensor wholeNorm(const at::Tensor& t, double norm_type) {
  std::vector<int64_t> dims(static_cast<size_t>(t.dim()));
  std::iota(dims.begin(), dims.end(), 0);
  return at::norm(t, norm_type, dims, false);
}

bool usesAutocast(const std::string& mixed_precision) { return mixed_precision == "fp16" || mixed_precision == "bf16"; }

LossScalerOptions scalerFor(const std::string& mixed_precision, LossScalerOptions options) {
  options.enabled = options.enabled && mixed_precision == "fp16";
  return options;
}

}  // namespace

TorchAccelerator::TorchAccelerator(TorchAcceleratorOptions options)
    : options_(std::move(options)),
      base_((checkTorchVersion(), options_.base)),
      device_(torchDevice(base_.device())),
      accumulation_steps_(std::max(1, options_.gradient_accumulation_steps > 0 ? options_.gradient_accumulation_steps
                                                                               : base_.gradientAccumulationSteps())),
      scaler_(scalerFor(base_.mixedPrecision(), options_.scaler)),
      zero_(options_.zero ? *options_.zero : readZeroOptions()) {}

TorchAccelerator::~TorchAccelerator() = default;

// Accelerate's device placement: a CPU model goes to the device; one elsewhere is refused by
// DDP's check, naming the parameter.
void TorchAccelerator::placeModel(torch::nn::Module& model) {
  const std::string& precision = mixedPrecision();
  if (device_.is_cpu() && usesAutocast(precision) && !cpuAutocastSupports(precisionDtype(precision))) {
    throw Error(fmt::format("mixed precision {} on CPU: this libtorch ({}) has no {} autocast on CPU", precision,
                            TORCH_VERSION, precision),
                "use --mixed_precision bf16 on CPU (or fp16 on a CUDA device)", ExitStatus::Usage);
  }
  bool on_cpu = true;
  for (const auto& p : model.parameters()) on_cpu = on_cpu && p.device().is_cpu();
  if (on_cpu && !device_.is_cpu()) model.to(device_);
}

std::shared_ptr<ModelEngine> TorchAccelerator::makeEngine(std::shared_ptr<torch::nn::Module> module) {
  if (zero_.stage == 0) return std::make_shared<DdpEngine>(std::move(module), base_, options_.ddp);
  return std::make_shared<ShardedEngine>(std::move(module), base_, zero_, options_.ddp);
}

AcceleratedOptimizer TorchAccelerator::prepareOptimizer(torch::optim::Optimizer& optimizer) {
  for (auto& m : models_) m->adoptOptimizer(optimizer);
  optimizers_.push_back(&optimizer);
  return AcceleratedOptimizer(optimizer, *this);
}

AcceleratedScheduler TorchAccelerator::prepareScheduler(torch::optim::LRScheduler& scheduler) {
  if (detail::SchedulerSteps::of(scheduler) == 0) detail::SchedulerSteps::of(scheduler) = 1;  // Python's initial step
  schedulers_.push_back(&scheduler);
  return AcceleratedScheduler(scheduler, *this);
}

TensorLoader& TorchAccelerator::prepare(at::Tensor inputs, at::Tensor targets, size_t batch_size) {
  DistributedSampler sampler(static_cast<size_t>(inputs.size(0)), numProcesses(), processIndex(), options_.sampler);
  loaders_.push_back(
      std::make_unique<TensorLoader>(std::move(inputs), std::move(targets), batch_size, std::move(sampler), device_));
  return *loaders_.back();
}

AutocastScope TorchAccelerator::autocast() const {
  const std::string& precision = mixedPrecision();
  return AutocastScope(device_.type(), precisionDtype(precision), usesAutocast(precision));
}

void TorchAccelerator::backward(const at::Tensor& loss) {
  if (synced_since_step_ && !models_.empty()) {
    throw Error("backward() was called again after this step's gradients were synchronised, before optimizer.step()",
                "call optimizer.step() and optimizer.zeroGrad() after each window's last backward (under "
                "accumulate(), each micro-step calls backward once)");
  }
  at::Tensor scaled = accumulation_steps_ > 1 ? loss / accumulation_steps_ : loss;
  if (scaler_.enabled()) scaled = scaled * scaler_.scale();
  scaled.backward();
  if (sync_gradients_) synced_since_step_ = true;
}

// Accelerate's Accelerator._do_sync: the end of a prepared loader's epoch ends the window and
// starts the count afresh, so every epoch's windows fall alike (3 batches, 2 steps: 011 011).
void TorchAccelerator::beginMicroStep() {
  bool loader_ended = false;
  for (const auto& l : loaders_) loader_ended = loader_ended || l->atEnd();
  if (loader_ended) {
    micro_step_ = 0;
    sync_gradients_ = true;
  } else {
    ++micro_step_;
    sync_gradients_ = micro_step_ % accumulation_steps_ == 0;
  }
  for (auto& m : models_) {
    if (!m->reducesEveryBackward()) m->setGradientSync(sync_gradients_);
  }
}

void TorchAccelerator::endMicroStep() {
  for (auto& m : models_) {
    if (!m->reducesEveryBackward()) m->setGradientSync(true);
  }
}

AccumulateScope::AccumulateScope(TorchAccelerator& accelerator) : accelerator_(accelerator) {
  accelerator_.beginMicroStep();
}
AccumulateScope::~AccumulateScope() { accelerator_.endMicroStep(); }

std::vector<at::Tensor> TorchAccelerator::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& m : models_) {
    for (const auto& p : m->gradientHolders()) out.push_back(p);
  }
  if (!models_.empty()) return out;  // the optimizers' parameters are the models'
  for (const auto* o : optimizers_) {
    for (const auto& group : o->param_groups()) {
      for (const auto& p : group.params()) out.push_back(p);
    }
  }
  return out;
}

// GradScaler.unscale_: every gradient times 1/scale, noting inf/NaN; once per step. Gradients
// elsewhere than in contiguous f32 CPU memory (a CUDA device) are checked on their device and
// read back once, not once per parameter.
void TorchAccelerator::unscaleGradients() {
  if (!scaler_.enabled() || unscaled_) return;
  unscaled_ = true;
  torch::NoGradGuard no_grad;
  at::Tensor nonfinite;  // whether any gradient unscaled on its device holds an inf or NaN
  for (auto& p : parameters()) {
    at::Tensor grad = p.grad();
    if (!grad.defined()) continue;
    if (grad.is_cpu() && grad.scalar_type() == at::kFloat && grad.is_contiguous()) {
      scaler_.unscale(grad.data_ptr<float>(), static_cast<size_t>(grad.numel()));
      continue;
    }
    grad.mul_(static_cast<double>(scaler_.inverseScale()));
    const at::Tensor here = torch::isfinite(grad).all().logical_not();
    nonfinite = nonfinite.defined() ? nonfinite.logical_or(here) : here;
  }
  if (nonfinite.defined()) scaler_.recordOverflow(nonfinite.item<bool>());
}

// torch.nn.utils.clip_grad_norm_'s arithmetic: torch.norm(g, p) is norm over every dimension
// named (another kernel than libtorch C++'s Tensor::norm(p), which sums 1-norms in another
// order), then the norm of the norms, the coefficient clamped to 1.
double TorchAccelerator::clipGradNorm(double max_norm, double norm_type) {
  // Inside a window the gradients are partial and this rank's own: clipping them would clip
  // something no optimizer step sees (Accelerate's documentation guards the call with
  // sync_gradients). A no-op, said once.
  if (!sync_gradients_) {
    if (!said_partial_clip_ && isMainProcess()) {
      std::cerr << "accel: clipGradNorm inside an accumulation window does nothing: the gradients are partial until "
                   "the window's last micro-step (guard the call with accelerator.syncGradients())\n";
    }
    said_partial_clip_ = true;
    return 0.0;
  }
  unscaleGradients();
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> grads, norms;
  for (const auto& p : parameters()) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  for (auto& m : models_) {
    for (auto& n : m->gradientNorms(norm_type)) norms.push_back(n.to(device_));  // collective when sharded
  }
  if (models_.empty()) {
    for (const auto& g : grads) norms.push_back(wholeNorm(g, norm_type));
  }
  if (norms.empty()) return 0.0;
  const at::Tensor total = wholeNorm(torch::stack(norms), norm_type);
  // Python's `max_norm / tensor` is tensor.reciprocal() * max_norm (Tensor.__rtruediv__).
  const at::Tensor coefficient = torch::clamp((total + 1e-6).reciprocal() * max_norm, c10::nullopt, 1.0);
  for (auto& g : grads) g.mul_(coefficient.to(g.device()));
  return total.item<double>();
}

void TorchAccelerator::optimizerStepped() {
  synced_since_step_ = false;
  unscaled_ = false;
}

void AcceleratedOptimizer::step() {
  TorchAccelerator& a = *accelerator_;
  if (!a.sync_gradients_) return;  // inside an accumulation window
  skipped_ = false;
  if (a.zero_.gradient_clipping > 0) a.clipGradNorm(a.zero_.gradient_clipping);  // DeepSpeed's gradient_clipping
  if (a.scaler_.enabled()) {
    a.unscaleGradients();
    skipped_ = !a.scaler_.step(&a.base_.processGroup().backend());
  }
  if (!skipped_) {
    for (auto& m : a.models_) m->beforeOptimizerStep();
    optimizer_->step();
    for (auto& m : a.models_) m->afterOptimizerStep();
  }
  a.skipped_ = skipped_;
  a.optimizerStepped();
}

void AcceleratedOptimizer::zeroGrad() {
  if (!accelerator_->sync_gradients_) return;
  optimizer_->zero_grad();
  for (auto& m : accelerator_->models_) m->afterZeroGrad();
  accelerator_->optimizerStepped();
}

void AcceleratedScheduler::step() {
  const TorchAccelerator& a = *accelerator_;
  if (!a.sync_gradients_ || a.skipped_) return;
  for (int i = 0; i < a.numProcesses(); ++i) scheduler_->step();
}

}  // namespace accel
