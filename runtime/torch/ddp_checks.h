// SPDX-License-Identifier: Apache-2.0
// What DdpEngine checks before and during training, each with an Error that names the
// parameter, the ranks and the fix: a module on another device, modules that differ between
// ranks, parameters without gradients. And the graph walk of find_unused_parameters.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/module.h>

#include "lib/common/error.h"

namespace accel {

class Accelerator;

// A parameter's gradient accumulator as libtorch holds it: std::shared_ptr in libtorch 1,
// c10::intrusive_ptr in libtorch 2.
using GradAccumulatorPtr = decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

// Throws Error naming the first parameter or buffer not on `device` ("cpu", "cuda:1").
void checkModuleDevice(const torch::nn::Module& module, const std::string& device);
// Every rank's parameters and buffers (names, shapes, dtypes) against rank 0's; on every rank
// the same Error names the first difference with both shapes. Collective over the CPU group.
void checkSameModuleOnEveryRank(const torch::nn::Module& module, Accelerator& accelerator);
// For each gradient accumulator, whether the autograd graph of `outputs` reaches it.
std::vector<bool> reachedParameters(const std::vector<at::Tensor>& outputs,
                                    const std::vector<GradAccumulatorPtr>& accumulators);
// The Error for parameters that got no gradient in a backward (`names` quoted).
Error unusedParametersError(const std::vector<std::string>& names, int rank);

}  // namespace accel
