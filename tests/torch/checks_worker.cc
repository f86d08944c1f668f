// SPDX-License-Identifier: Apache-2.0
// One behaviour of the libtorch component per mode, printed for checks_test.py (scaler: for
// tests/peers/check_torch_scaler.py) to compare with PyTorch's or to find in an error:
// checks_worker MODE [ARGS...]. Under `accel launch` unless the mode says otherwise.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "runtime/ddp/reducer.h"
#include "runtime/torch/torch_accelerator.h"

// `auto loader = accelerator.prepare(...)` would copy the loader the accelerator watches: refused
// at compile time (runtime/torch/data_loader.h).
static_assert(!std::is_copy_constructible_v<accel::TensorLoader> && !std::is_copy_assignable_v<accel::TensorLoader>);

namespace {

struct TwoLayerImpl : torch::nn::Module {
  explicit TwoLayerImpl(int64_t hidden = 16, bool spare = false)
      : a(register_module("a", torch::nn::Linear(8, hidden))), b(register_module("b", torch::nn::Linear(hidden, 4))) {
    if (spare) unused = register_module("unused", torch::nn::Linear(4, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return b(torch::relu(a(x))); }
  torch::nn::Linear a, b, unused{nullptr};
};
TORCH_MODULE(TwoLayer);

std::string floats(const torch::Tensor& t) {
  auto c = t.contiguous().to(torch::kFloat);
  std::vector<std::string> out;
  for (int64_t i = 0; i < c.numel(); ++i) out.push_back(fmt::format("{:.9g}", c.data_ptr<float>()[i]));
  return fmt::format("{}", fmt::join(out, " "));
}

// sampler N WORLD SHUFFLE DROP_LAST: every rank's indices for epochs 0-2 (no launch needed).
int sampler(char** argv) {
  const size_t n = std::stoul(argv[0]);
  const int world = std::stoi(argv[1]);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    for (int r = 0; r < world; ++r) {
      accel::DistributedSampler s(n, world, r, {std::string(argv[2]) == "1", 1234, std::string(argv[3]) == "1"});
      s.setEpoch(epoch);
      std::cout << fmt::format("{} {} {}\n", epoch, r, fmt::join(s.indices(), " "));
    }
  }
  return 0;
}

// A batch of fixed data through TwoLayer; the model's gradients after backward.
void fixedBackward(const std::function<torch::Tensor(torch::Tensor)>& forward) {
  torch::manual_seed(3);
  auto x = torch::randn({16, 8});
  forward(x).pow(2).sum().backward();
}

// clip MAX_NORM NORM_TYPE: gradients before and after clipGradNorm, and the norm it returned.
int clip(char** argv) {
  accel::TorchAccelerator acc;
  torch::manual_seed(1);
  auto model = acc.prepare(TwoLayer());
  fixedBackward([&](torch::Tensor x) { return model(x); });
  for (const auto& p : model->parameters()) std::cout << "before " << floats(p.grad()) << "\n";
  const double norm = acc.clipGradNorm(std::stod(argv[0]), std::stod(argv[1]));
  for (const auto& p : model->parameters()) std::cout << "after " << floats(p.grad()) << "\n";
  std::cout << fmt::format("norm {:.17g}\n", norm);
  return 0;
}

// steplr STEPS: the learning rate after each optimizer step under StepLR(step_size 3, gamma 0.5).
int steplr(char** argv) {
  accel::TorchAccelerator acc;
  auto model = acc.prepare(TwoLayer());
  torch::optim::SGD sgd(model->parameters(), 0.1);
  torch::optim::StepLR step_lr(sgd, 3, 0.5);
  auto optimizer = acc.prepareOptimizer(sgd);
  auto scheduler = acc.prepareScheduler(step_lr);
  for (int i = 0; i < std::stoi(argv[0]); ++i) {
    fixedBackward([&](torch::Tensor x) { return model(x); });
    optimizer.step();
    scheduler.step();
    optimizer.zeroGrad();
    std::cout << fmt::format("lr {:.9g}\n", sgd.param_groups()[0].options().get_lr());
  }
  return 0;
}

// gather N BATCH: every rank's samples of a dataset of N through gatherForMetrics, on rank 0.
int gather(char** argv) {
  accel::TorchAccelerator acc;
  const int64_t n = std::stoll(argv[0]);
  accel::TensorLoader& loader =
      acc.prepare(torch::arange(n).to(torch::kFloat).unsqueeze(1), torch::arange(n), std::stoul(argv[1]));
  std::vector<int64_t> seen;
  while (auto batch = loader.next()) {
    auto all = acc.gatherForMetrics(batch->target);
    for (int64_t i = 0; i < all.size(0); ++i) seen.push_back(all[i].item<int64_t>());
  }
  if (acc.isMainProcess()) std::cout << fmt::format("gathered {}\n", fmt::join(seen, " "));
  return 0;
}

// windows N BATCH STEPS EPOCHS: the accumulation windows over EPOCHS epochs of N samples in
// batches of BATCH with STEPS accumulation steps: one line per epoch, 1 where a micro-step syncs.
int windows(char** argv) {
  accel::TorchAcceleratorOptions options;
  options.gradient_accumulation_steps = std::stoi(argv[2]);
  accel::TorchAccelerator acc(options);
  const int64_t n = std::stoll(argv[0]);
  accel::TensorLoader& loader =
      acc.prepare(torch::arange(n).to(torch::kFloat).unsqueeze(1), torch::arange(n), std::stoul(argv[1]));
  for (int epoch = 0; epoch < std::stoi(argv[3]); ++epoch) {
    loader.setEpoch(epoch);
    std::string syncs;
    while (loader.next()) {
      auto scope = acc.accumulate();
      syncs += acc.syncGradients() ? '1' : '0';
    }
    if (acc.isMainProcess()) std::cout << "windows " << syncs << std::endl;
  }
  return 0;
}

// partial_clip: clipGradNorm inside a window of 2 steps (twice), then at its last step.
int partialClip(char**) {
  accel::TorchAcceleratorOptions options;
  options.gradient_accumulation_steps = 2;
  accel::TorchAccelerator acc(options);
  torch::manual_seed(1);
  auto model = acc.prepare(TwoLayer());
  for (int step = 0; step < 2; ++step) {
    auto scope = acc.accumulate();
    acc.backward(model(torch::ones({4, 8})).pow(2).sum());
    std::cout << fmt::format("clip {} {:.6g}\n", acc.syncGradients() ? 1 : 0, acc.clipGradNorm(1e9));
    if (!acc.syncGradients()) std::cout << fmt::format("clip {} {:.6g}\n", 0, acc.clipGradNorm(1e9));
  }
  return 0;
}

// unused FIND: a model with a parameter the loss never uses; with FIND=1 it trains and reports
// each parameter's gradient state, with 0 the first backward is refused naming it.
int unused(char** argv) {
  accel::TorchAcceleratorOptions options;
  options.ddp.find_unused_parameters = std::string(argv[0]) == "1";
  accel::TorchAccelerator acc(options);
  auto model = acc.prepare(TwoLayer(16, true));
  fixedBackward([&](torch::Tensor x) { return model(x); });
  for (const auto& p : model->named_parameters()) {
    std::cout << fmt::format("{} {}\n", p.key(), p.value().grad().defined() ? "grad" : "none");
  }
  return 0;
}

// mismatch: rank 1 builds a wider hidden layer than rank 0.
int mismatch(char**) {
  accel::TorchAccelerator acc;
  auto model = acc.prepare(TwoLayer(acc.processIndex() == 1 ? 32 : 16));
  return 0;
}

// twice: backward twice in one step.
int twice(char**) {
  accel::TorchAccelerator acc;
  auto model = acc.prepare(TwoLayer());
  torch::optim::SGD sgd(model->parameters(), 0.1);
  auto optimizer = acc.prepareOptimizer(sgd);
  for (int i = 0; i < 2; ++i) acc.backward(model(torch::ones({2, 8})).sum());
  optimizer.step();
  return 0;
}

// device: a model whose parameter is on the meta device (no memory), not the Accelerator's.
struct MetaImpl : torch::nn::Module {
  MetaImpl() { register_parameter("w", torch::empty({4}, torch::Device(torch::kMeta))); }
  torch::Tensor forward(const torch::Tensor& x) { return x; }
};
TORCH_MODULE(Meta);

int device(char**) {
  accel::TorchAccelerator acc;
  auto model = acc.prepare(Meta());
  return 0;
}

// overlap: a model of several buckets; how many had started when backward's last gradient came.
int overlap(char**) {
  accel::TorchAcceleratorOptions options;
  options.ddp.first_bucket_bytes = options.ddp.bucket_bytes = 64 << 10;
  accel::TorchAccelerator acc(options);
  auto model =
      acc.prepare(torch::nn::Sequential(torch::nn::Linear(256, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                                        torch::nn::ReLU(), torch::nn::Linear(256, 256)));
  model(torch::randn({64, 256})).sum().backward();
  std::cout << fmt::format("buckets {} launched_before_last_gradient {}\n",
                           model.engine().ddp()->reducer().buckets().size(),
                           model.engine().ddp()->launchedBeforeLastGradient());
  return 0;
}

// scaler STEPS INIT_SCALE GROWTH_INTERVAL [STEP:KIND:RANK...], under --mixed_precision fp16: SGD
// on fixed data through the Accelerator's loss scaler, writing KIND (inf, -inf or nan) into one
// gradient element after backward at STEP on RANK (* for every rank). Prints the initial
// parameters and the data, then per step the scale before it, whether it was skipped and the
// sum of the parameters after it. The model is not prepare()d, so that this runs where libtorch
// has no fp16 CPU autocast: the scaler needs none, and unscales the optimizer's parameters.
int scaler(char** argv) {
  accel::TorchAcceleratorOptions options;
  options.scaler.init_scale = std::stof(argv[1]);
  options.scaler.growth_interval = std::stoi(argv[2]);
  accel::TorchAccelerator acc(options);
  if (!acc.scaler().enabled()) throw accel::Error("scaler: the loss scaler is off", "launch with fp16");
  std::map<int, float> inject;  // this rank's injections by step
  for (char** a = argv + 3; *a; ++a) {
    const std::string spec = *a;
    const size_t c1 = spec.find(':'), c2 = spec.rfind(':');
    const std::string kind = spec.substr(c1 + 1, c2 - c1 - 1), rank = spec.substr(c2 + 1);
    if (rank != "*" && std::stoi(rank) != acc.processIndex()) continue;
    inject[std::stoi(spec.substr(0, c1))] = kind == "nan" ? NAN : kind == "-inf" ? -INFINITY : INFINITY;
  }
  torch::manual_seed(5);
  TwoLayer model;
  const auto x = torch::randn({16, 8}), y = torch::randn({16, 4});
  for (const auto& p : model->named_parameters()) std::cout << "init " << p.key() << " " << floats(p.value()) << "\n";
  std::cout << "x " << floats(x) << "\ny " << floats(y) << "\n";
  torch::optim::SGD sgd(model->parameters(), 0.05);
  auto optimizer = acc.prepareOptimizer(sgd);
  const auto params = model->parameters();
  for (int step = 0; step < std::stoi(argv[0]); ++step) {
    optimizer.zeroGrad();
    acc.backward(torch::mse_loss(model(x), y));
    if (inject.count(step)) {
      torch::NoGradGuard no_grad;
      params[static_cast<size_t>(step) % params.size()].grad().view(-1)[0].fill_(inject[step]);
    }
    const float scale = acc.scaler().scale();
    optimizer.step();
    double checksum = 0;
    for (const auto& p : params) checksum += p.detach().to(torch::kDouble).sum().item<double>();
    std::cout << fmt::format("step {} scale {:.9g} skipped {:d} checksum {:.17g}\n", step, scale,
                             optimizer.stepWasSkipped(), checksum);
  }
  return 0;
}

// handoff STEPS: DDP training steps whose buckets the op queue's thread reduces (larger than what
// the shared-memory transport runs on the caller's thread), and one small bucket it runs inline,
// so that autograd's hooks hand gradients to the reducer while earlier buckets' all-reduce
// completes on that thread (for ThreadSanitizer: CTest torch_tsan_handoff).
int handoff(char** argv) {
  accel::TorchAcceleratorOptions options;
  options.ddp.first_bucket_bytes = 4 << 10;
  options.ddp.bucket_bytes = 128 << 10;
  accel::TorchAccelerator acc(options);
  torch::manual_seed(1);
  auto model =
      acc.prepare(torch::nn::Sequential(torch::nn::Linear(256, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                                        torch::nn::ReLU(), torch::nn::Linear(256, 8)));
  torch::optim::SGD sgd(model->parameters(), 0.01);
  auto optimizer = acc.prepareOptimizer(sgd);
  for (int step = 0; step < std::stoi(argv[0]); ++step) {
    acc.backward(model(torch::randn({32, 256})).pow(2).mean());
    optimizer.step();
    optimizer.zeroGrad();
  }
  std::cout << fmt::format("reductions {} buckets {} launched_before_last_gradient {}\n",
                           model.engine().ddp()->reductions(), model.engine().ddp()->reducer().buckets().size(),
                           model.engine().ddp()->launchedBeforeLastGradient());
  return 0;
}

// reload DIR: torch::load into a wrapped model (Tensor::set_: new gradient accumulators), then a
// backward: still reduced.
// loader_resume N WORLD SAVED_WORLD POSITION: rank 0's loader of WORLD ranks given a state of
// SAVED_WORLD ranks at POSITION: its position, and the global list position of its next sample.
int loaderResume(char** argv) {
  const size_t n = std::stoul(argv[0]);
  const int world = std::stoi(argv[1]), saved_world = std::stoi(argv[2]);
  const int64_t fields[2] = {0, std::stoll(argv[3])};
  std::vector<uint8_t> state(sizeof(fields));
  std::memcpy(state.data(), fields, sizeof(fields));
  accel::TensorLoader loader(torch::zeros({static_cast<int64_t>(n), 1}), torch::zeros({static_cast<int64_t>(n)}), 4,
                             accel::DistributedSampler(n, world, 0, {false, 0, false}), torch::kCPU);
  loader.loadState(state, saved_world);
  std::cout << fmt::format("position {} next {}\n", loader.position(),
                           loader.sampler().listPosition(loader.position(), 0));
  return 0;
}

int reload(char** argv) {
  accel::TorchAccelerator acc;
  auto model = acc.prepare(TwoLayer());
  const std::string path = std::string(argv[0]) + "/model-" + std::to_string(acc.processIndex()) + ".pt";
  torch::save(model.module(), path);
  torch::load(model.module(), path);
  fixedBackward([&](torch::Tensor x) { return model(x); });
  std::cout << fmt::format("reductions {}\n", model.engine().ddp()->reductions());
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  torch::set_num_threads(1);
  const std::map<std::string, std::function<int(char**)>> modes = {{"sampler", sampler},
                                                                   {"clip", clip},
                                                                   {"steplr", steplr},
                                                                   {"gather", gather},
                                                                   {"unused", unused},
                                                                   {"mismatch", mismatch},
                                                                   {"twice", twice},
                                                                   {"device", device},
                                                                   {"overlap", overlap},
                                                                   {"scaler", scaler},
                                                                   {"handoff", handoff},
                                                                   {"reload", reload},
                                                                   {"loader_resume", loaderResume},
                                                                   {"windows", windows},
                                                                   {"partial_clip", partialClip}};
  if (argc < 2 || !modes.count(argv[1])) throw accel::Error("usage: checks_worker MODE [ARGS...]");
  return modes.at(argv[1])(argv + 2);
} catch (const accel::Error& e) {
  std::cerr << "checks_worker: error: " << e.what() << "\n" << (e.hint().empty() ? "" : "hint: " + e.hint() + "\n");
  return static_cast<int>(e.status());
} catch (const std::exception& e) {
  std::cerr << "checks_worker: " << e.what() << "\n";
  return 1;
}
