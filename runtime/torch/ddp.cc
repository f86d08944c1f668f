// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/ddp.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "lib/common/error.h"
#include "runtime/ddp/reducer.h"
#include "runtime/state/accelerator.h"
#include "runtime/torch/ddp_checks.h"
#include "runtime/torch/tensor_view.h"
#include "runtime/torch/torch_version.h"

namespace accel {

struct DdpEngine::State {
  std::shared_ptr<torch::nn::Module> module;
  DdpOptions options;
  Backend* data = nullptr;     // gradients and buffers: the accelerator's device group
  Backend* control = nullptr;  // which parameters were used: its CPU group
  std::vector<std::string> names;
  std::vector<at::Tensor> params;  // those that require grad, in registration order
  std::vector<at::Tensor> buffers;
  std::vector<GradAccumulatorPtr> accumulators;  // kept alive: the hooks live there
  std::unique_ptr<Reducer> reducer;
  at::Tensor inverse_world;  // 1/world, a 0-dim double on the CPU
  bool gradient_sync = true;
  bool forward_param_sync = true;  // the last forward was a synchronising one
  bool armed = false;              // its backward reduces
  bool in_backward = false;        // the end-of-backward callback is queued
  std::vector<bool> locally_used;
  size_t reductions = 0;
  size_t marked = 0;
  size_t launched_before_last = 0;

  void hook(size_t i, const std::weak_ptr<State>& self);
  at::Tensor bucketView(size_t i);
  void onGradient(size_t i, const std::weak_ptr<State>& self);
  void markReady(size_t i);
  void finishBackward();
  std::vector<bool> globallyUsed();
};

namespace {

// Every tensor's bytes from rank 0, in order (initial state, and buffers before a forward).
std::vector<GradientBuffer> gradientLayout(const std::vector<at::Tensor>& params,
                                           const std::vector<std::string>& names) {
  std::vector<GradientBuffer> out;
  for (size_t i = 0; i < params.size(); ++i) {
    out.push_back({nullptr, static_cast<size_t>(params[i].numel()),
                   runtimeType(params[i].scalar_type(), "parameter '" + names[i] + "'")});
  }
  return out;
}

}  // namespace

DdpEngine::DdpEngine(std::shared_ptr<torch::nn::Module> module, Accelerator& accelerator, DdpOptions options)
    : state_(std::make_shared<State>()) {
  checkTorchVersion();
  State& s = *state_;
  s.module = std::move(module);
  s.options = options;
  for (const auto& item : s.module->named_parameters(true)) {
    if (!item.value().requires_grad()) continue;
    s.names.push_back(item.key());
    s.params.push_back(item.value());
  }
  for (const auto& item : s.module->named_buffers(true)) s.buffers.push_back(item.value());
  checkModuleDevice(*s.module, accelerator.device().str());
  checkSameModuleOnEveryRank(*s.module, accelerator);
  s.data = &accelerator.deviceProcessGroup().backend();
  s.control = &accelerator.processGroup().backend();
  {
    torch::NoGradGuard no_grad;
    broadcastFromRankZero(*s.data, s.params, "a parameter");
    broadcastFromRankZero(*s.data, s.buffers, "a buffer");
  }
  ReducerOptions reducer_options{options.first_bucket_bytes, options.bucket_bytes, Compression::None,
                                 accelerator.device().type, accelerator.device().index};
  s.reducer = std::make_unique<Reducer>(*s.data, gradientLayout(s.params, s.names), reducer_options);
  s.inverse_world = torch::scalar_tensor(1.0 / s.data->size(), torch::kDouble);
  s.locally_used.assign(s.params.size(), true);
  s.accumulators.resize(s.params.size());
  for (size_t i = 0; i < s.params.size(); ++i) s.hook(i, state_);
}

DdpEngine::~DdpEngine() = default;

void DdpEngine::beforeForward() {
  State& s = *state_;
  // Loading into a parameter with Tensor::set_ (torch::load, Module::load) gives it a new
  // gradient accumulator, which would silently end its synchronisation: follow it.
  for (size_t i = 0; i < s.params.size(); ++i) {
    if (torch::autograd::impl::grad_accumulator(s.params[i]) != s.accumulators[i]) s.hook(i, state_);
  }
  if (s.options.broadcast_buffers && s.forward_param_sync && !s.buffers.empty() && s.data->size() > 1) {
    torch::NoGradGuard no_grad;
    broadcastFromRankZero(*s.data, s.buffers, "a buffer");
  }
}

void DdpEngine::afterForward(const std::vector<at::Tensor>& outputs) {
  State& s = *state_;
  s.armed = torch::GradMode::is_enabled() && s.gradient_sync;
  s.forward_param_sync = s.armed;
  if (!s.armed || !s.options.find_unused_parameters) return;
  s.locally_used = reachedParameters(outputs, s.accumulators);
}

void DdpEngine::setGradientSync(bool sync) { state_->gradient_sync = sync; }
bool DdpEngine::gradientSync() const { return state_->gradient_sync; }
size_t DdpEngine::reductions() const { return state_->reductions; }
size_t DdpEngine::launchedBeforeLastGradient() const { return state_->launched_before_last; }
const Reducer& DdpEngine::reducer() const { return *state_->reducer; }
const std::vector<std::string>& DdpEngine::parameterNames() const { return state_->names; }
torch::nn::Module& DdpEngine::module() const { return *state_->module; }

// Parameter i's gradient accumulator calls onGradient(i) once its gradient is final.
void DdpEngine::State::hook(size_t i, const std::weak_ptr<State>& self) {
  accumulators[i] = torch::autograd::impl::grad_accumulator(params[i]);
  accumulators[i]->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
      [self, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
        if (auto state = self.lock()) state->onGradient(i, self);
        return outputs;
      }));
}

// The reducer's bucket memory for parameter i, as a flat tensor.
at::Tensor DdpEngine::State::bucketView(size_t i) {
  const at::Tensor& p = params[i];
  return torch::from_blob(reducer->gradientData(i), {p.numel()}, p.options().requires_grad(false));
}

// Autograd hook: parameter i's gradient is final for this backward.
void DdpEngine::State::onGradient(size_t i, const std::weak_ptr<State>& self) {
  if (!armed) return;
  if (!in_backward) {
    in_backward = true;
    torch::autograd::Engine::get_default_engine().queue_callback([self] {
      if (auto state = self.lock()) state->finishBackward();
    });
    for (size_t u = 0; u < params.size(); ++u) {  // unused ones count as ready at once, as in DDP
      if (!locally_used[u]) markReady(u);
    }
  }
  markReady(i);
}

// The gradient (or zeros, for a parameter without one) times 1/world into its bucket in one
// pass, as DDP's mul_out: the scalar is rounded to the gradient's dtype as there.
void DdpEngine::State::markReady(size_t i) {
  torch::NoGradGuard no_grad;
  at::Tensor view = bucketView(i);
  const at::Tensor& grad = params[i].grad();
  if (!grad.defined()) {
    view.zero_();
  } else if (data->size() > 1) {
    at::mul_out(view, grad.reshape({-1}), inverse_world);
  } else {
    view.copy_(grad.reshape({-1}));
  }
  if (++marked == params.size()) launched_before_last = reducer->launched();
  reducer->markReadyDivided(i);  // launches the bucket when it is complete
}

// End of backward (autograd engine callback): every bucket reduced, the means into .grad.
void DdpEngine::State::finishBackward() {
  in_backward = false;
  armed = false;
  marked = 0;
  std::vector<std::string> missing;
  for (size_t i : reducer->unmarked()) missing.push_back("'" + names[i] + "'");
  if (!missing.empty()) throw unusedParametersError(missing, data->rank());
  reducer->finish();
  const std::vector<bool> used = options.find_unused_parameters ? globallyUsed() : locally_used;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!used[i]) continue;  // used by no rank: its gradient stays as it was, as in DDP
    at::Tensor& grad = params[i].mutable_grad();
    at::Tensor mean = bucketView(i).view(params[i].sizes());
    if (grad.defined()) {
      grad.copy_(mean);
    } else {
      grad = mean.clone();
    }
  }
  ++reductions;
}

// Whether any rank used each parameter (one all-reduce of flags over the CPU group).
std::vector<bool> DdpEngine::State::globallyUsed() {
  std::vector<int32_t> flags(locally_used.begin(), locally_used.end());
  control->allReduce(cpuTensor(flags.data(), flags.size()), ReduceOp::Max)->wait();
  return {flags.begin(), flags.end()};
}

}  // namespace accel
