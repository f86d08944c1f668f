// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/zero/sharded_engine.h"

#include <iostream>
#include <map>

#include <fmt/format.h>
#include <torch/torch.h>

#include "lib/common/error.h"
#include "runtime/state/accelerator.h"
#include "runtime/torch/tensor_view.h"
#include "runtime/torch/torch_version.h"
#include "runtime/torch/zero/engine_state.h"

namespace accel {

namespace {

at::Device engineDevice(const Device& d) {
  return d.type == DeviceType::CUDA ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(d.index))
                                    : at::Device(at::kCPU);
}

}  // namespace

ShardedEngine::ShardedEngine(std::shared_ptr<torch::nn::Module> module, Accelerator& accelerator, ZeroOptions zero,
                             DdpOptions ddp)
    : state_(std::make_shared<State>()) {
  checkTorchVersion();
  State& s = *state_;
  if (zero.stage < 1 || zero.stage > 3) {
    throw UsageError(fmt::format("ZeRO stage {} cannot shard a model", zero.stage),
                     "use stage 1, 2 or 3 (stage 0 is DDP: DistributedDataParallel)");
  }
  s.module = std::move(module);
  s.zero = zero;
  s.device = engineDevice(accelerator.device());
  const bool offload = zero.offload_optimizer || (zero.stage == 3 && zero.offload_params);
  s.shard_device = offload ? at::Device(at::kCPU) : s.device;
  s.own_shards = zero.stage == 3 || !(s.shard_device == s.device);
  checkModuleDevice(*s.module, accelerator.device().str());
  checkSameModuleOnEveryRank(*s.module, accelerator);
  s.data = &accelerator.deviceProcessGroup().backend();
  s.control = &accelerator.processGroup().backend();
  s.rank = s.data->rank();
  s.world = s.data->size();
  for (const auto& item : s.module->named_buffers(true)) s.buffers.push_back(item.value());
  s.layout = buildShardLayout(*s.module, s.world, {zero.unit_classes, zero.unit_min_params, zero.stage == 3});
  if (zero.stage == 1) {
    s.ddp = std::make_unique<DdpEngine>(s.module, accelerator, ddp);  // takes rank 0's values
  } else {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> params;
    for (const auto& p : s.layout.params) params.push_back(p.full);
    broadcastFromRankZero(*s.data, params, "a parameter");
    broadcastFromRankZero(*s.data, s.buffers, "a buffer");
  }
  s.units.resize(s.layout.units.size());
  s.shardParameters();
  s.inverse_world = torch::scalar_tensor(1.0 / s.world, torch::kDouble);
  if (zero.stage >= 2) {
    s.accumulators.resize(s.layout.params.size());
    for (size_t i = 0; i < s.layout.params.size(); ++i) s.hook(i, state_);
  }
  if (offload && s.device.is_cpu() && s.rank == 0) {
    std::cerr << "accel: offloading to the CPU changes nothing here: the accelerator's device is the CPU, where the "
                 "shards and the optimizer step already are\n";
  }
}

// Not collective: a released parameter stays released (reading it is libtorch's error about
// storage size 0), so that one rank's engine going away never waits on the others.
ShardedEngine::~ShardedEngine() { unregisterGatherOnUse(state_.get()); }

void ShardedEngine::beforeForward() {
  State& s = *state_;
  if (s.ddp) return s.ddp->beforeForward();
  for (size_t i = 0; i < s.layout.params.size(); ++i) {
    if (torch::autograd::impl::grad_accumulator(s.layout.params[i].full) != s.accumulators[i]) s.hook(i, state_);
  }
  if (s.forward_param_sync && !s.buffers.empty() && s.world > 1) {
    torch::NoGradGuard no_grad;
    broadcastFromRankZero(*s.data, s.buffers, "a buffer");
  }
  s.in_forward = true;
}

void ShardedEngine::afterForward(const std::vector<at::Tensor>& outputs) {
  State& s = *state_;
  if (s.ddp) return s.ddp->afterForward(outputs);
  s.in_forward = false;
  s.armed = torch::GradMode::is_enabled() && s.gradient_sync;
  s.forward_param_sync = s.armed;
  if (!torch::GradMode::is_enabled()) s.releaseAll();  // no backward follows
}

void ShardedEngine::setGradientSync(bool sync) {
  State& s = *state_;
  if (s.ddp) return s.ddp->setGradientSync(sync);
  if (!sync && s.zero.stage == 3) {
    throw UsageError("noSync() under ZeRO stage 3: whole unsharded gradients would be kept on every rank",
                     "leave accumulation to accelerator.accumulate() (stage 3 reduces every backward), or use stage 2");
  }
  s.gradient_sync = sync;
}

bool ShardedEngine::gradientSync() const { return state_->ddp ? state_->ddp->gradientSync() : state_->gradient_sync; }
bool ShardedEngine::reducesEveryBackward() const { return state_->zero.stage >= 2; }
torch::nn::Module& ShardedEngine::module() const { return *state_->module; }
DdpEngine* ShardedEngine::ddp() { return state_->ddp.get(); }
int ShardedEngine::stage() const { return state_->zero.stage; }
const ShardLayout& ShardedEngine::layout() const { return state_->layout; }
const std::vector<at::Tensor>& ShardedEngine::shards() const { return state_->shards; }
size_t ShardedEngine::gathers() const { return state_->gathers; }
size_t ShardedEngine::reductions() const { return state_->ddp ? state_->ddp->reductions() : state_->reductions; }

std::vector<at::Tensor> ShardedEngine::gradientHolders() const {
  if (state_->zero.stage == 1) return ModelEngine::gradientHolders();
  return state_->shards;
}

std::vector<at::Tensor> ShardedEngine::gradientNorms(double norm_type) {
  if (state_->zero.stage == 1) return ModelEngine::gradientNorms(norm_type);
  return state_->shardNorms(norm_type);
}

void ShardedEngine::adoptOptimizer(torch::optim::Optimizer& optimizer) {
  State& s = *state_;
  if (dynamic_cast<torch::optim::LBFGS*>(&optimizer)) {
    throw UsageError("LBFGS cannot be sharded: its line search needs every parameter whole in each step",
                     "use SGD, Adam, AdamW, Adagrad or RMSprop under ZeRO (torch's ZeroRedundancyOptimizer and FSDP "
                     "do not shard LBFGS either), or DDP");
  }
  if (!optimizer.state().empty()) {
    throw UsageError("the optimizer has already stepped: its state holds whole parameters",
                     "prepare the optimizer (accelerator.prepareOptimizer) before its first step");
  }
  std::map<const c10::TensorImpl*, size_t> index;
  for (size_t i = 0; i < s.layout.params.size(); ++i) index.emplace(s.layout.params[i].full.unsafeGetTensorImpl(), i);
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      auto it = index.find(p.unsafeGetTensorImpl());
      if (it != index.end()) p = s.shards[it->second];  // another model's stays as it is
    }
  }
}

// Stage 1 steps on a copy of its rows of DDP's averaged gradients (the optimizer's zero_grad
// detaches its gradients in place, which a view refuses); the whole gradients are freed.
void ShardedEngine::beforeOptimizerStep() {
  State& s = *state_;
  if (s.zero.stage != 1) return;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < s.layout.params.size(); ++i) {
    const ShardedParam& p = s.layout.params[i];
    const at::Tensor g = p.full.grad();
    if (!g.defined()) continue;
    at::Tensor rows = g.reshape({-1}).narrow(0, p.firstRow(s.rank) * p.row_numel, p.rowsOf(s.rank) * p.row_numel);
    s.shards[i].mutable_grad() = rows.view(p.shardShape(s.rank)).to(s.shard_device, false, /*copy=*/true);
    p.full.mutable_grad().reset();  // the step needs this rank's rows only
  }
}

void ShardedEngine::afterOptimizerStep() {
  State& s = *state_;
  if (s.zero.stage == 3) return;  // the next forward gathers the new rows
  for (size_t u = 0; u < s.units.size(); ++u) s.gatherUnit(u);
}

// Stage 1's shard gradients are copies made for the step: freed with the whole ones, whatever
// the optimizer's zero_grad does (libtorch 1 zeroes in place, 2 sets to none).
void ShardedEngine::afterZeroGrad() {
  State& s = *state_;
  for (const auto& p : s.layout.params) p.full.mutable_grad().reset();
  if (s.zero.stage != 1) return;
  for (auto& shard : s.shards) shard.mutable_grad().reset();
}

void ShardedEngine::step(torch::optim::Optimizer& optimizer) {
  beforeOptimizerStep();
  optimizer.step();
  afterOptimizerStep();
}

int ShardedEngine::rank() const { return state_->rank; }
int ShardedEngine::world() const { return state_->world; }

void ShardedEngine::afterLoad() {
  State& s = *state_;
  if (s.zero.stage == 3) return s.releaseAll();
  for (size_t u = 0; u < s.units.size(); ++u) s.gatherUnit(u);
}

at::Tensor ShardedEngine::wholeRows(size_t i, const at::Tensor& rows) {
  State& s = *state_;
  GatherOnUsePause pause;
  torch::NoGradGuard no_grad;
  const ShardedParam& p = s.layout.params.at(i);
  at::Tensor send = torch::zeros({p.chunk_rows * p.row_numel}, rows.options().device(s.device).requires_grad(false));
  const int64_t mine = p.rowsOf(s.rank) * p.row_numel;
  if (mine > 0) send.narrow(0, 0, mine).copy_(rows.reshape({-1}));
  at::Tensor receive = torch::empty({send.numel() * s.world}, send.options());
  s.data->allGather(viewOf(send, "a shard"), viewOf(receive, "a whole parameter"))->wait();
  at::Tensor whole = torch::empty(p.full.sizes(), send.options().device(at::kCPU));
  at::Tensor flat = whole.view({-1});
  for (int r = 0; r < s.world; ++r) {
    const int64_t n = p.rowsOf(r) * p.row_numel;
    if (n > 0) flat.narrow(0, p.firstRow(r) * p.row_numel, n).copy_(receive.narrow(0, r * send.numel(), n));
  }
  return whole;
}

}  // namespace accel
