// SPDX-License-Identifier: Apache-2.0
// The C++ side of scripts/bench_torch (scripts/bench_torch.py is its PyTorch twin): times
// training steps of the Fashion-MNIST example's CNN, or of a wide MLP, on fixed random data.
// Modes:
//   ddp     under `accel launch`: the TorchAccelerator's DDP, every step synchronises gradients;
//   nosync  under `accel launch`: the same program with every step under model.noSync(), so the
//           ranks do the same local work and share the cores the same way, without the sync;
//   single  one process, no launcher: plain libtorch, no DDP.
// A step is forward, cross-entropy, backward, SGD (momentum) step and zero_grad, on one batch
// of 64 samples per rank drawn once from a seed. Every process computes on one thread
// (torch::set_num_threads(1)), so that two ranks on two cores compare with one process on one.
// Warm-up steps are not timed. Rank 0 prints one line of key=value fields:
//   bench_torch impl=accel model=M mode=D world=W steps=N median_ms=… mean_ms=… min_ms=…
//     grad_mb=… comm_s=… exposed_s=…
// comm_s / exposed_s: the reducer's timing over the timed steps (runtime/ddp/reducer.h), as
// the mean over ranks; 1 - exposed/comm is the share of all-reduce hidden behind backward.
// Usage: accel-bench-torch cnn|mlp ddp|nosync|single STEPS [WARMUP (default 5)] [MLP_WIDTH (2048)]
#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "apps/fashion_mnist/cnn.h"
#include "lib/common/error.h"
#include "runtime/ddp/reducer.h"
#include "runtime/torch/torch_accelerator.h"

namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kMlpInputs = 1024;
constexpr double kLearningRate = 0.01;

// 1024 inputs -> width -> width -> 10 logits, ReLU between: the compute-heavy model, whose
// large layers give several MB of gradients in more than one bucket.
class WideMlpImpl : public torch::nn::Module {
 public:
  explicit WideMlpImpl(int64_t width)
      : fc1_(register_module("fc1", torch::nn::Linear(kMlpInputs, width))),
        fc2_(register_module("fc2", torch::nn::Linear(width, width))),
        fc3_(register_module("fc3", torch::nn::Linear(width, 10))) {}
  torch::Tensor forward(torch::Tensor x) { return fc3_(torch::relu(fc2_(torch::relu(fc1_(x))))); }

 private:
  torch::nn::Linear fc1_, fc2_, fc3_;
};
TORCH_MODULE(WideMlp);

struct Args {
  std::string model, mode;
  int64_t steps = 0, warmup = 5, width = 2048;
};

Args parseArgs(int argc, char** argv) {
  const char* usage = "usage: accel-bench-torch cnn|mlp ddp|nosync|single STEPS [WARMUP] [MLP_WIDTH]";
  if (argc < 4) throw accel::UsageError(usage);
  Args a{argv[1], argv[2], std::stoll(argv[3])};
  if (argc > 4) a.warmup = std::stoll(argv[4]);
  if (argc > 5) a.width = std::stoll(argv[5]);
  const bool known =
      (a.model == "cnn" || a.model == "mlp") && (a.mode == "ddp" || a.mode == "nosync" || a.mode == "single");
  if (!known || a.steps < 1 || a.warmup < 0 || a.width < 1) throw accel::UsageError(usage);
  return a;
}

// This rank's batch: the same on every run, different on every rank (as a sampler's shards).
std::pair<torch::Tensor, torch::Tensor> makeBatch(const std::string& model, int rank) {
  torch::manual_seed(1000 + rank);
  auto x = model == "cnn" ? torch::randn({kBatch, 1, 28, 28}) : torch::randn({kBatch, kMlpInputs});
  return {x, torch::randint(0, 10, {kBatch})};
}

struct Summary {
  double median_ms = 0, mean_ms = 0, min_ms = 0;
};

Summary summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  const double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  return {median, std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(n), ms.front()};
}

double gradientMegabytes(const std::vector<torch::Tensor>& params) {
  double bytes = 0;
  for (const auto& p : params) bytes += static_cast<double>(p.numel() * p.element_size());
  return bytes / (1 << 20);
}

// Runs warmup + steps calls of `step`, returns the timed steps' milliseconds. `started` runs
// once between the two (a barrier, and the reducer's timing snapshot).
template <typename Step, typename Started> std::vector<double> timeSteps(const Args& a, Step step, Started started) {
  for (int64_t i = 0; i < a.warmup; ++i) step();
  started();
  std::vector<double> ms;
  for (int64_t i = 0; i < a.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

void report(const Args& a, int world, const Summary& s, double grad_mb, double comm, double exposed) {
  std::cout << fmt::format(
                   "bench_torch impl=accel model={} mode={} world={} steps={} median_ms={:.3f} mean_ms={:.3f} "
                   "min_ms={:.3f} grad_mb={:.2f} comm_s={:.6f} exposed_s={:.6f}",
                   a.model, a.mode, world, a.steps, s.median_ms, s.mean_ms, s.min_ms, grad_mb, comm, exposed)
            << std::endl;
}

// One process, plain libtorch: the baseline that scaling efficiency divides by.
template <typename Holder> void runSingle(const Args& a, Holder net) {
  auto [x, y] = makeBatch(a.model, 0);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(kLearningRate).momentum(0.9));
  auto step = [&, &x = x, &y = y] {
    auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    sgd.step();
    sgd.zero_grad();
  };
  const auto ms = timeSteps(a, step, [] {});
  report(a, 1, summarise(ms), gradientMegabytes(net->parameters()), 0, 0);
}

// The two timing figures, each the mean over ranks (one all-reduce over the CPU group).
std::pair<double, double> meanOverRanks(accel::TorchAccelerator& accelerator, double comm, double exposed) {
  auto t = torch::tensor({comm, exposed}, torch::kDouble);
  t = accelerator.gather(t).view({-1, 2}).mean(0);
  return {t[0].item<double>(), t[1].item<double>()};
}

// Under `accel launch`: the tutorials' loop, with or without gradient sync.
template <typename Holder> void runDistributed(const Args& a, Holder net) {
  accel::TorchAccelerator accelerator;
  auto model = accelerator.prepare(net);
  auto [x, y] = makeBatch(a.model, accelerator.processIndex());
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(kLearningRate).momentum(0.9));
  auto optimizer = accelerator.prepareOptimizer(sgd);
  const bool sync = a.mode == "ddp";
  auto step = [&, &x = x, &y = y] {
    {
      std::optional<accel::NoSync> no_sync;
      if (!sync) no_sync.emplace(model.engine());
      auto loss = torch::nn::functional::cross_entropy(model(x), y);
      accelerator.backward(loss);
    }
    optimizer.step();
    optimizer.zeroGrad();
  };
  const accel::Reducer& reducer = model.engine().reducer();
  accel::Reducer::Timing before;
  const auto ms = timeSteps(a, step, [&] {
    accelerator.waitForEveryone();  // every rank's timed steps start together
    before = reducer.timing();
  });
  const auto [comm, exposed] = meanOverRanks(accelerator, reducer.timing().communication - before.communication,
                                             reducer.timing().exposed - before.exposed);
  if (accelerator.isMainProcess()) {
    report(a, accelerator.numProcesses(), summarise(ms), gradientMegabytes(model->parameters()), comm, exposed);
  }
}

template <typename Holder> void run(const Args& a, Holder net) {
  if (a.mode == "single") {
    runSingle(a, std::move(net));
  } else {
    runDistributed(a, std::move(net));
  }
}

}  // namespace

int main(int argc, char** argv) try {
  torch::set_num_threads(1);
  torch::set_num_interop_threads(1);
  const Args a = parseArgs(argc, argv);
  torch::manual_seed(0);  // the same initial weights in every mode (DDP takes rank 0's anyway)
  if (a.model == "cnn") {
    run(a, accel::fashion::FashionCnn());
  } else {
    run(a, WideMlp(a.width));
  }
  return 0;
} catch (const accel::Error& e) {
  std::cerr << "accel-bench-torch: " << e.what() << "\n";
  return static_cast<int>(e.status());
} catch (const std::exception& e) {
  std::cerr << "accel-bench-torch: " << e.what() << "\n";
  return 1;
}
