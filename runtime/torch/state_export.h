// SPDX-License-Identifier: Apache-2.0
// TorchAccelerator::exportState: the whole model and its optimizers' state in one file that
// Python reads with torch.load's default (weights_only=True): torch.save's zip format, a plain
// dict of tensors, numbers and lists, no TorchScript type tags (torch::pickle_save's dicts carry
// them, and weights_only refuses them). The dict is PyTorch's state_dict()s':
//   {"model": {name: tensor}, "optimizers": [{"state": {index: {field: value}},
//                                             "param_groups": [{"lr": lr, "params": [index, …]}]}]}
// with tensors on the CPU and indices counting the optimizer's parameters in group order.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Dict.h>
#include <torch/optim/optimizer.h>

#include "runtime/torch/prepared_model.h"

namespace accel {

// Collective: a sharded model's parameters and optimizer state are gathered one tensor at a time;
// the dict is filled on rank `root` only (elsewhere it stays empty), so no rank holds more than
// one whole tensor beyond its own state.
c10::impl::GenericDict wholeState(const std::vector<ModelEngine*>& models,
                                  const std::vector<torch::optim::Optimizer*>& optimizers, int rank, int root);

// Writes `state` to `path` as torch.save does (atomically: a temporary file renamed over it).
void writeTorchFile(const std::string& path, const c10::impl::GenericDict& state);

}  // namespace accel
