// SPDX-License-Identifier: Apache-2.0
// The Fashion-MNIST example's model: two convolution blocks with BatchNorm, then two linear
// layers. Small enough for an epoch on CPU workers; BatchNorm makes it the example of a model
// with buffers (running mean and variance) besides parameters, which DDP must broadcast.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace accel::fashion {

// conv(1->16, 3x3, pad 1, no bias)-BN-ReLU-maxpool 2 -> conv(16->32, 3x3, pad 1, no bias)-BN-
// ReLU-maxpool 2 -> flatten -> linear(32*7*7 -> 64)-ReLU -> linear(64 -> 10).
// forward: float [N, 1, 28, 28] -> logits [N, 10] (no softmax: pair with cross_entropy).
// Registered names (conv1, bn1, conv2, bn2, fc1, fc2) are the state-dict keys; the parameter
// initialisation is libtorch's default, drawn from the global generator (torch::manual_seed).
class FashionCnnImpl : public torch::nn::Module {
 public:
  FashionCnnImpl();
  torch::Tensor forward(torch::Tensor x);

 private:
  // In forward order, which is also the registration (and so the parameter) order.
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::Linear fc1_{nullptr};
  torch::nn::Linear fc2_{nullptr};
};
TORCH_MODULE(FashionCnn);

}  // namespace accel::fashion
