// SPDX-License-Identifier: Apache-2.0
// The parity tests' model, defined identically in parity_ddp.py: a convolution with BatchNorm (a
// buffer DDP keeps in sync) and two linear layers, small enough for 100 steps in seconds.
#pragma once

#include <torch/torch.h>

struct ParityNetImpl : torch::nn::Module {
  ParityNetImpl()
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)))),
        bn(register_module("bn", torch::nn::BatchNorm2d(4))),
        fc1(register_module("fc1", torch::nn::Linear(4 * 8 * 8, 32))),
        fc2(register_module("fc2", torch::nn::Linear(32, 10))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(bn(conv(x))).flatten(1);
    return fc2(torch::relu(fc1(h)));
  }
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(ParityNet);
