// SPDX-License-Identifier: Apache-2.0
#include "apps/fashion_mnist/cnn.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

namespace accel::fashion {

namespace F = torch::nn::functional;

namespace {

torch::nn::Conv2dOptions conv3x3(int64_t in, int64_t out) {
  // No bias: the BatchNorm right after it subtracts any constant offset.
  return torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false);
}

}  // namespace

FashionCnnImpl::FashionCnnImpl()
    : conv1_(register_module("conv1", torch::nn::Conv2d(conv3x3(1, 16)))),
      bn1_(register_module("bn1", torch::nn::BatchNorm2d(16))),
      conv2_(register_module("conv2", torch::nn::Conv2d(conv3x3(16, 32)))),
      bn2_(register_module("bn2", torch::nn::BatchNorm2d(32))),
      fc1_(register_module("fc1", torch::nn::Linear(32 * 7 * 7, 64))),
      fc2_(register_module("fc2", torch::nn::Linear(64, 10))) {}

torch::Tensor FashionCnnImpl::forward(torch::Tensor x) {
  x = F::max_pool2d(F::relu(bn1_(conv1_(x))), F::MaxPool2dFuncOptions(2));
  x = F::max_pool2d(F::relu(bn2_(conv2_(x))), F::MaxPool2dFuncOptions(2));
  x = F::relu(fc1_(x.flatten(1)));
  return fc2_(x);
}

}  // namespace accel::fashion
