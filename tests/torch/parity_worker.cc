// SPDX-License-Identifier: Apache-2.0
// The C++ side of the parity tests (parity_test.py), under `accel launch`: trains ParityNet with
// the TorchAccelerator on data it generates from a seed, and writes what the Python side needs to
// repeat the run with PyTorch's own DDP (data.pt, init.pt: torch::pickle_save, read by
// torch.load) and what is compared (final-rank<r>.pt, losses-rank<r>.txt, accuracy-rank<r>.txt),
// and the device it trained on (device-rank<r>.txt).
// Usage: parity_worker OUT_DIR STEPS [--checkpoint DIR EVERY] [--die-at STEP]
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "runtime/torch/torch_accelerator.h"
#include "tests/torch/parity_net.h"
#include "tests/torch/worker_files.h"

namespace {

constexpr int64_t kTrain = 512, kTest = 256, kBatch = 8;

// Inputs from a seed; labels from a fixed random linear teacher, so the task is learnable.
std::pair<torch::Tensor, torch::Tensor> makeData(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  auto x = torch::randn({n, 1, 8, 8});
  auto teacher = torch::randn({64, 10});
  return {x, x.flatten(1).matmul(teacher).argmax(1)};
}

}  // namespace

int main(int argc, char** argv) try {
  torch::set_num_threads(1);
  torch::set_num_interop_threads(1);
  if (argc < 3) throw accel::Error("usage: parity_worker OUT_DIR STEPS [--checkpoint DIR EVERY] [--die-at STEP]");
  const std::string out = argv[1];
  const int64_t steps = std::stoll(argv[2]);
  std::string checkpoint;
  int64_t every = 0, die_at = -1;
  for (int i = 3; i < argc; ++i) {
    if (std::string(argv[i]) == "--checkpoint" && i + 2 < argc) checkpoint = argv[++i], every = std::stoll(argv[++i]);
    if (std::string(argv[i]) == "--die-at" && i + 1 < argc) die_at = std::stoll(argv[++i]);
  }
  accel::TorchAcceleratorOptions options;
  options.sampler = {.shuffle = true, .seed = 1234, .drop_last = false};
  accel::TorchAccelerator accelerator(options);
  // On a CUDA device: the same convolution algorithms on both sides, every run (as parity_ddp.py).
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
  auto [all_x, all_y] = makeData(kTrain + kTest, 7);
  torch::Tensor x = all_x.slice(0, 0, kTrain), y = all_y.slice(0, 0, kTrain);
  torch::Tensor tx = all_x.slice(0, kTrain), ty = all_y.slice(0, kTrain);
  torch::manual_seed(42);
  ParityNet net;
  const int rank = accelerator.processIndex();
  if (rank == 0) {
    c10::Dict<std::string, torch::Tensor> data;
    for (const auto& [k, v] : {std::pair{"x", x}, {"y", y}, {"tx", tx}, {"ty", ty}}) data.insert(k, v);
    saveTensors(out + "/data.pt", data);
    saveTensors(out + "/init.pt", moduleState(*net));
  }
  auto model = accelerator.prepare(net);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto optimizer = accelerator.prepareOptimizer(sgd);
  accel::TensorLoader& loader = accelerator.prepare(x, y, kBatch);
  int64_t step = 0;
  if (!checkpoint.empty()) step = accelerator.loadState(checkpoint).value_or(0);
  std::ofstream losses(out + "/losses-rank" + std::to_string(rank) + ".txt", step ? std::ios::app : std::ios::trunc);
  for (int64_t epoch = loader.sampler().epoch(); step < steps; loader.setEpoch(++epoch)) {
    while (step < steps) {
      auto batch = loader.next();
      if (!batch) break;
      auto scope = accelerator.accumulate();
      torch::Tensor loss;
      {
        auto autocast = accelerator.autocast();
        loss = torch::nn::functional::cross_entropy(model(batch->input), batch->target);
      }
      accelerator.backward(loss);
      optimizer.step();
      optimizer.zeroGrad();
      losses << fmt::format("{:.9g}\n", loss.item<float>()) << std::flush;
      ++step;
      if (step == die_at) std::raise(SIGKILL);  // after the checkpoint before it, mid-window
      if (every && step % every == 0) accelerator.saveState(checkpoint, step);
    }
  }
  saveTensors(out + "/final-rank" + std::to_string(rank) + ".pt", moduleState(*model.module()));
  torch::NoGradGuard no_grad;
  model.module()->eval();
  const torch::Tensor predicted = model.module()->forward(tx.to(accelerator.device())).argmax(1);
  const double accuracy = predicted.eq(ty.to(accelerator.device())).to(torch::kDouble).mean().item<double>();
  std::ofstream(out + "/accuracy-rank" + std::to_string(rank) + ".txt") << fmt::format("{:.6f}\n", accuracy);
  std::ofstream(out + "/device-rank" + std::to_string(rank) + ".txt") << accelerator.device().str() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "parity_worker: " << e.what() << "\n";
  return 1;
}
