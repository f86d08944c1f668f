// SPDX-License-Identifier: Apache-2.0
// The C++ side of scripts/bench_torch (scripts/bench_torch.py is its PyTorch twin): times
// training steps of the Fashion-MNIST example's CNN, or of a wide MLP, on fixed random data.
// Modes:
//   ddp        under `accel launch`: the TorchAccelerator's DDP, every step synchronises;
//   nosync     under `accel launch`: the same program with every step under model.noSync(), so
//              the ranks do the same local work and share the cores the same way, without sync;
//   alternate  under `accel launch`: blocks of kBlock steps of each kind in turn, DDP, barrier
//              and no-sync, so that all see the same machine (other load comes and goes on a
//              shared machine); each block's first step is not timed (see plan()). A barrier
//              step is a no-sync step whose ranks then meet once (a shared-memory barrier,
//              about a microsecond): what keeping ranks in lock step costs on this machine,
//              which any DDP pays before the cost of its own sync;
//   single     one process, no launcher: plain libtorch, no DDP.
// A step is forward, cross-entropy, backward, SGD (momentum) step and zero_grad, on one batch
// of 64 samples per rank drawn once from a seed. Every process computes on one thread
// (torch::set_num_threads(1)), so that two ranks on two cores compare with one process on one.
// Warm-up steps are not timed. Rank 0 prints a line of key=value fields per kind of step:
//   bench_torch impl=accel model=M mode=ddp|barrier|nosync|single world=W steps=N median_ms=… mean_ms=…
//     min_ms=… cpu_ms=… grad_mb=… comm_s=… exposed_s=…
// cpu_ms: the median of the process's CPU time (every thread) per step, which other work on a
// shared machine barely changes, unlike the wall times.
// comm_s / exposed_s: the reducer's timing (runtime/ddp/reducer.h) summed over the timed
// synchronising steps, the mean over ranks; 1 - exposed/comm is the share of the all-reduce
// hidden behind backward.
// Usage: accel-bench-torch cnn|mlp ddp|nosync|alternate|single STEPS [WARMUP (5)] [MLP_WIDTH (512)]
//   STEPS: timed steps of each kind.
#include <algorithm>
#include <chrono>
#include <ctime>
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
constexpr int64_t kBlock = 5;
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
  int64_t steps = 0, warmup = 5, width = 512;
};

Args parseArgs(int argc, char** argv) {
  const char* usage =
      "usage: accel-bench-torch cnn|mlp ddp|nosync|alternate|single STEPS [WARMUP (5)] [MLP_WIDTH (512)]";
  if (argc < 4) throw accel::UsageError(usage);
  Args a{argv[1], argv[2], std::stoll(argv[3])};
  if (argc > 4) a.warmup = std::stoll(argv[4]);
  if (argc > 5) a.width = std::stoll(argv[5]);
  const std::vector<std::string> modes{"ddp", "nosync", "alternate", "single"};
  const bool known = (a.model == "cnn" || a.model == "mlp") && std::count(modes.begin(), modes.end(), a.mode);
  if (!known || a.steps < 1 || a.warmup < 0 || a.width < 1) throw accel::UsageError(usage);
  return a;
}

// This rank's batch: the same on every run, different on every rank (as a sampler's shards).
std::pair<torch::Tensor, torch::Tensor> makeBatch(const std::string& model, int rank) {
  torch::manual_seed(1000 + rank);
  auto x = model == "cnn" ? torch::randn({kBatch, 1, 28, 28}) : torch::randn({kBatch, kMlpInputs});
  return {x, torch::randint(0, 10, {kBatch})};
}

enum Kind { kSync, kBarrier, kLocal, kKinds };
constexpr const char* kKindNames[kKinds] = {"ddp", "barrier", "nosync"};

struct PlannedStep {
  Kind kind;
  bool timed;
};

// The steps after warm-up. In alternate mode the first step of each block is left untimed: it
// is unlike the rest of its kind, since both DDPs broadcast buffers before a forward only when
// the previous forward synchronised (a DDP step after no-sync ones skips it, a no-sync step
// after DDP ones does it), and the first DDP step also absorbs the ranks' drift apart.
std::vector<PlannedStep> plan(const Args& a) {
  std::vector<PlannedStep> out;
  if (a.mode != "alternate") {
    out.assign(static_cast<size_t>(a.steps), {a.mode == "nosync" ? kLocal : kSync, true});
    return out;
  }
  for (int64_t timed = 0; timed < a.steps; timed += kBlock - 1) {
    for (Kind kind : {kSync, kBarrier, kLocal}) {
      for (int64_t i = 0; i < kBlock; ++i) out.push_back({kind, i > 0});
    }
  }
  return out;
}

double cpuMilliseconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Per kind of step: wall and CPU milliseconds of each timed step, and the reducer's timing.
struct Measured {
  std::vector<double> ms[kKinds], cpu_ms[kKinds];
  accel::Reducer::Timing comm;  // over the timed synchronising steps
};

// Warm-up, `started` (a barrier), then the plan. `step(kind)` runs one step; `timing()` is the
// reducer's running total (zeros without DDP).
template <typename Step, typename Timing, typename Started>
Measured measure(const Args& a, Step step, Timing timing, Started started) {
  for (int64_t i = 0; i < a.warmup; ++i) step(a.mode == "nosync" ? kLocal : kSync);
  started();
  Measured m;
  for (const PlannedStep& p : plan(a)) {
    const accel::Reducer::Timing before = timing();
    const double cpu0 = cpuMilliseconds();
    const auto t0 = std::chrono::steady_clock::now();
    step(p.kind);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!p.timed) continue;
    m.ms[p.kind].push_back(ms);
    m.cpu_ms[p.kind].push_back(cpuMilliseconds() - cpu0);
    m.comm.communication += timing().communication - before.communication;
    m.comm.exposed += timing().exposed - before.exposed;
  }
  return m;
}

double gradientMegabytes(const std::vector<torch::Tensor>& params) {
  double bytes = 0;
  for (const auto& p : params) bytes += static_cast<double>(p.numel() * p.element_size());
  return bytes / (1 << 20);
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

// One line per kind of step that was timed.
void report(const Args& a, int world, const Measured& m, double grad_mb) {
  auto line = [&](const char* mode, const std::vector<double>& ms, const std::vector<double>& cpu,
                  accel::Reducer::Timing t) {
    if (ms.empty()) return;
    const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    std::cout << fmt::format(
                     "bench_torch impl=accel model={} mode={} world={} steps={} median_ms={:.3f} mean_ms={:.3f} "
                     "min_ms={:.3f} cpu_ms={:.3f} grad_mb={:.2f} comm_s={:.6f} exposed_s={:.6f}",
                     a.model, mode, world, ms.size(), median(ms), mean, *std::min_element(ms.begin(), ms.end()),
                     median(cpu), grad_mb, t.communication, t.exposed)
              << std::endl;
  };
  for (int k = 0; k < kKinds; ++k) {
    const char* name = a.mode == "single" ? "single" : kKindNames[k];
    line(name, m.ms[k], m.cpu_ms[k], k == kSync ? m.comm : accel::Reducer::Timing{});
  }
}

// One process, plain libtorch: the baseline that scaling efficiency divides by.
template <typename Holder> void runSingle(const Args& a, Holder net) {
  auto [x, y] = makeBatch(a.model, 0);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(kLearningRate).momentum(0.9));
  auto step = [&, &x = x, &y = y](Kind) {
    auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    sgd.step();
    sgd.zero_grad();
  };
  const Measured m = measure(
      a, step, [] { return accel::Reducer::Timing{}; }, [] {});
  report(a, 1, m, gradientMegabytes(net->parameters()));
}

// The reducer's two figures as the mean over ranks (a gather over the CPU group).
accel::Reducer::Timing meanOverRanks(accel::TorchAccelerator& accelerator, accel::Reducer::Timing t) {
  auto both = torch::tensor({t.communication, t.exposed}, torch::kDouble);
  both = accelerator.gather(both).view({-1, 2}).mean(0);
  return {both[0].item<double>(), both[1].item<double>()};
}

// Under `accel launch`: the tutorials' loop, each step with or without gradient sync.
template <typename Holder> void runDistributed(const Args& a, Holder net) {
  accel::TorchAccelerator accelerator;
  auto model = accelerator.prepare(net);
  auto [x, y] = makeBatch(a.model, accelerator.processIndex());
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(kLearningRate).momentum(0.9));
  auto optimizer = accelerator.prepareOptimizer(sgd);
  auto step = [&, &x = x, &y = y](Kind kind) {
    {
      std::optional<accel::NoSync> no_sync;
      if (kind != kSync) no_sync.emplace(model.engine());
      auto loss = torch::nn::functional::cross_entropy(model(x), y);
      accelerator.backward(loss);
    }
    if (kind == kBarrier) accelerator.waitForEveryone();  // where DDP waits for its all-reduce
    optimizer.step();
    optimizer.zeroGrad();
  };
  const accel::Reducer& reducer = model.engine().ddp()->reducer();
  Measured m = measure(
      a, step, [&] { return reducer.timing(); }, [&] { accelerator.waitForEveryone(); });
  m.comm = meanOverRanks(accelerator, m.comm);
  if (accelerator.isMainProcess()) report(a, accelerator.numProcesses(), m, gradientMegabytes(model->parameters()));
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
