// SPDX-License-Identifier: Apache-2.0
// Stages 2 and 3 in backward (engine_state.h): a unit whose parameters all have their gradient
// is reduce-scattered at once, while backward goes on; the end of backward (an autograd engine
// callback) reduces the units that did not complete (a parameter without a gradient counts as
// zeros), waits, and adds each rank's rows to its shards' gradients.
#include <numeric>

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include "runtime/torch/tensor_view.h"
#include "runtime/torch/zero/engine_state.h"

namespace accel {

void ShardedEngine::State::hook(size_t i, const std::weak_ptr<State>& self) {
  accumulators[i] = torch::autograd::impl::grad_accumulator(layout.params[i].full);
  accumulators[i]->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
      [self, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
        if (auto state = self.lock()) state->onGradient(i, self);
        return outputs;
      }));
}

void ShardedEngine::State::onGradient(size_t i, const std::weak_ptr<State>& self) {
  if (!armed) return;  // noSync(): the whole gradient stays, for the next synchronising backward
  if (!in_backward) {
    in_backward = true;
    torch::autograd::Engine::get_default_engine().queue_callback([self] {
      if (auto state = self.lock()) state->finishBackward();
    });
  }
  const size_t u = layout.params[i].unit;
  if (++units[u].ready == layout.units[u].params.size()) launchReduce(u);
}

// Every rank's rows of each gradient times 1/world (DDP's mul_out: the scalar rounded to the
// gradient's dtype) into rank-major chunks; the whole gradients are freed, and under stage 3
// the unit's parameters, whose backward is over.
void ShardedEngine::State::launchReduce(size_t u) {
  GatherOnUsePause pause;
  torch::NoGradGuard no_grad;
  const ShardUnit& unit = layout.units[u];
  UnitState& state = units[u];
  if (unit.params.empty() || state.reducing) return;
  // One reduce-scatter runs while backward goes on: the previous one's buffers (a whole unit's
  // gradients) are folded into the shards and freed before this one's are made.
  for (size_t v : in_flight) completeReduce(v);
  in_flight.clear();
  const at::Tensor& first = layout.params[unit.params.front()].full;
  state.send = torch::zeros({unit.shard_numel * world}, first.options().requires_grad(false));
  for (size_t i : unit.params) {
    const ShardedParam& p = layout.params[i];
    const at::Tensor grad = p.full.grad();
    if (!grad.defined()) continue;
    const at::Tensor flat = grad.reshape({-1});
    for (int r = 0; r < world; ++r) {
      const int64_t n = p.rowsOf(r) * p.row_numel;
      if (n == 0) continue;
      at::Tensor to = state.send.narrow(0, r * unit.shard_numel + p.offset, n);
      at::mul_out(to, flat.narrow(0, p.firstRow(r) * p.row_numel, n), inverse_world);
    }
    p.full.mutable_grad().reset();
  }
  state.receive = torch::empty({unit.shard_numel}, state.send.options());
  state.work = data->reduceScatter(viewOf(state.send, "a unit's gradients"), viewOf(state.receive, "a gradient shard"),
                                   ReduceOp::Sum);
  state.reducing = true;
  releaseUnit(u);
  in_flight.push_back(u);
}

// Waits for unit u's reduce-scatter and adds this rank's rows to its shards' gradients.
void ShardedEngine::State::completeReduce(size_t u) {
  GatherOnUsePause pause;
  torch::NoGradGuard no_grad;
  UnitState& state = units[u];
  state.work->wait();
  for (size_t i : layout.units[u].params) {
    const ShardedParam& p = layout.params[i];
    const at::Tensor rows = state.receive.narrow(0, p.offset, p.rowsOf(rank) * p.row_numel).view(p.shardShape(rank));
    at::Tensor& grad = shards[i].mutable_grad();
    if (grad.defined()) {
      grad.add_(rows.to(shard_device));
    } else {
      grad = rows.to(shard_device, /*non_blocking=*/false, /*copy=*/true);
    }
  }
  state.send = state.receive = at::Tensor();
  state.work.reset();
}

void ShardedEngine::State::finishBackward() {
  in_backward = false;
  armed = false;
  for (size_t u = 0; u < units.size(); ++u) launchReduce(u);
  for (size_t u : in_flight) completeReduce(u);
  in_flight.clear();
  for (UnitState& state : units) state.ready = 0, state.reducing = false;
  releaseAll();
  ++reductions;
}

// Each whole parameter's gradient norm from its shards, as PyTorch's DTensor computes it for
// fully_shard's clip_grad_norm_ (_NormPartial): each rank's torch.linalg.vector_norm of its rows,
// to the power p, summed over ranks (max for the inf-norm), to the power 1/p; one all-reduce.
std::vector<at::Tensor> ShardedEngine::State::shardNorms(double norm_type) {
  torch::NoGradGuard no_grad;
  const bool inf = std::isinf(norm_type);
  std::vector<at::Tensor> local;
  for (const at::Tensor& s : shards) {
    const at::Tensor g = s.grad();
    if (!g.defined() || g.numel() == 0) {
      local.push_back(torch::zeros({}, s.options().device(shard_device)));
      continue;
    }
    std::vector<int64_t> dims(static_cast<size_t>(g.dim()));
    std::iota(dims.begin(), dims.end(), 0);
    const at::Tensor norm = at::norm(g, norm_type, dims, false);
    local.push_back(inf ? norm : norm.pow(norm_type));
  }
  at::Tensor all = torch::stack(local).to(device).contiguous();
  data->allReduce(viewOf(all, "gradient norms"), inf ? ReduceOp::Max : ReduceOp::Sum)->wait();
  if (!inf) all = all.pow(1.0 / norm_type);
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < all.size(0); ++i) out.push_back(all[i]);
  return out;
}

}  // namespace accel
