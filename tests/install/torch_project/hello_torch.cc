// SPDX-License-Identifier: Apache-2.0
// One DDP step of a linear model through the installed torch component; every rank checks that
// its gradient is the mean of all ranks' (each rank's input is its rank + 1).
#include <iostream>

#include <torch/torch.h>

#include "runtime/torch/torch_accelerator.h"

int main() {
  accel::TorchAccelerator accelerator;
  torch::manual_seed(0);
  auto model = accelerator.prepare(torch::nn::Linear(torch::nn::LinearOptions(1, 1).bias(false)));
  const double r = accelerator.processIndex() + 1, world = accelerator.numProcesses();
  accelerator.backward(model(torch::full({1, 1}, r)).sum());
  const double mean = (world + 1) / 2;  // the mean of 1..world
  const double grad = model->weight.grad().item<double>();
  std::cout << "hello torch from rank " << accelerator.processIndex() << " of " << world << ": gradient " << grad
            << (grad == mean ? " (the mean)" : " NOT the mean") << std::endl;
  return grad == mean ? 0 : 1;
}
