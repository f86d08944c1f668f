// SPDX-License-Identifier: Apache-2.0
// The C++ side of the ZeRO tests (zero_test.py, zero_torch.py, scripts/bench_zero), under
// `accel launch` with DeepSpeed or FSDP settings choosing the stage: trains ZeroNet (zero_net.h)
// with the TorchAccelerator on data made from a seed, and writes what is compared:
// final-rank<r>.pt (every parameter whole; with --no-files a line `digest rank R HEX` instead,
// and no data.pt or init.pt), losses-rank<r>.txt, and one line
// `memory rank R stage S peak P rest Q` of CPU bytes counted by an allocator installed before
// anything is allocated (c10::SetCPUAllocator): the peak during the training loop (from the
// prepared model and optimizer on) and what stays allocated after an optimizer step; and
// `step rank R median S`, the median seconds of a step after the first. Rank 0 writes data.pt and init.pt
// for the Python side. Usage: zero_worker OUT_DIR STEPS sgd|adamw [--width W] [--depth D] [--batch B] [--clip X]
//          [--checkpoint DIR --save-at K] [--resume DIR] [--die-at K] [--die-in-save K] [--export FILE]
//          [--safetensors FILE] [--tied 1] [--meta-param 1] [--nosync 1] [--no-files 1]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <c10/core/CPUAllocator.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "runtime/torch/torch_accelerator.h"
#include "tests/torch/worker_files.h"
#include "tests/torch/zero_net.h"

namespace {

// Every CPU allocation's bytes, now and at the peak. Each block's size sits in a 64-byte header
// before it (the context must be the data pointer: libtorch's raw_allocate asks for that).
struct CountingAllocator final : c10::Allocator {
  static constexpr size_t kHeader = 64;
  static inline std::atomic<int64_t> now{0}, peak{0};
  static void release(void* data) {
    if (!data) return;
    char* block = static_cast<char*>(data) - kHeader;
    size_t bytes = 0;
    std::memcpy(&bytes, block, sizeof bytes);
    now -= static_cast<int64_t>(bytes);
    std::free(block);
  }
// libtorch 2 made Allocator::allocate non-const.
#if TORCH_VERSION_MAJOR >= 2
  c10::DataPtr allocate(size_t n) override{
#else
  c10::DataPtr allocate(size_t n) const override {
#endif
      void* block = nullptr;
  if (posix_memalign(&block, kHeader, n + kHeader) != 0) throw std::bad_alloc();
  std::memcpy(block, &n, sizeof n);
  const int64_t total = now += static_cast<int64_t>(n);
  for (int64_t p = peak.load(); total > p && !peak.compare_exchange_weak(p, total);) {
  }
  void* data = static_cast<char*>(block) + kHeader;
  return {data, data, &release, c10::Device(c10::kCPU)};
} c10::DeleterFnPtr raw_deleter() const override {
  return &release;
}
void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
};  // namespace

CountingAllocator& counting() {
  static CountingAllocator* a = [] {
    auto* c = new CountingAllocator;
    c10::SetCPUAllocator(c, /*priority=*/100);
    return c;
  }();
  return *a;
}

struct Args {
  std::string out, optimizer, checkpoint, resume, export_file, safetensors;
  int64_t steps = 0, width = 32, depth = 3, batch = 8, save_at = -1, die_at = -1, die_in_save = -1;
  double clip = 0;
  bool tied = false, meta_param = false, nosync = false, no_files = false;
};

Args parse(int argc, char** argv) {
  if (argc < 4) throw accel::Error("usage: zero_worker OUT_DIR STEPS sgd|adamw [options]");
  Args a;
  a.out = argv[1];
  a.optimizer = argv[3];
  a.steps = std::stoll(argv[2]);
  const auto count = [](int64_t& field) { return [&field](const std::string& v) { field = std::stoll(v); }; };
  const auto text = [](std::string& field) { return [&field](const std::string& v) { field = v; }; };
  const auto flag = [](bool& field) { return [&field](const std::string& v) { field = v == "1"; }; };
  const std::map<std::string, std::function<void(const std::string&)>> options = {
      {"--width", count(a.width)},
      {"--depth", count(a.depth)},
      {"--batch", count(a.batch)},
      {"--clip", [&a](const std::string& v) { a.clip = std::stod(v); }},
      {"--checkpoint", text(a.checkpoint)},
      {"--save-at", count(a.save_at)},
      {"--resume", text(a.resume)},
      {"--die-at", count(a.die_at)},
      {"--die-in-save", count(a.die_in_save)},
      {"--export", text(a.export_file)},
      {"--safetensors", text(a.safetensors)},
      {"--tied", flag(a.tied)},
      {"--meta-param", flag(a.meta_param)},
      {"--nosync", flag(a.nosync)},
      {"--no-files", flag(a.no_files)}};
  for (int i = 4; i + 1 < argc; i += 2) {
    auto it = options.find(argv[i]);
    if (it == options.end()) throw accel::Error(std::string("zero_worker: unknown option ") + argv[i]);
    it->second(argv[i + 1]);
  }
  return a;
}

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const std::string& kind, std::vector<torch::Tensor> params) {
  if (kind == "sgd") return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.05).momentum(0.9));
  if (kind == "adamw")
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  if (kind == "lbfgs") return std::make_unique<torch::optim::LBFGS>(params, torch::optim::LBFGSOptions(0.1));
  throw accel::Error("zero_worker: unknown optimizer " + kind);
}

// The initial model as a .safetensors file (F32), for `accel estimate-memory`.
void writeSafetensors(const std::string& path, torch::nn::Module& m) {
  std::string header = "{";
  std::vector<torch::Tensor> tensors;
  int64_t offset = 0;
  for (const auto& p : m.named_parameters()) {
    std::string shape;
    for (int64_t d : p.value().sizes()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const int64_t bytes = p.value().numel() * 4;
    header += fmt::format("{}\"{}\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                          tensors.empty() ? "" : ",", p.key(), shape, offset, offset + bytes);
    offset += bytes;
    tensors.push_back(p.value().detach().contiguous());
  }
  header += "}";
  std::ofstream out(path, std::ios::binary);
  const uint64_t length = header.size();
  out.write(reinterpret_cast<const char*>(&length), sizeof length);
  out << header;
  for (const auto& t : tensors) out.write(static_cast<const char*>(t.data_ptr()), t.numel() * 4);
}

// FNV-1a over every parameter's bytes in registration order. A sharded model's parameters are
// gathered one at a time (reading a stage-3 parameter directly would leave its unit gathered).
uint64_t digest(accel::ModelEngine& engine) {
  uint64_t h = 1469598103934665603ull;
  const auto add = [&h](const torch::Tensor& whole) {
    const torch::Tensor t = whole.detach().contiguous();
    const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
    for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  };
  if (auto* sharded = dynamic_cast<accel::ShardedEngine*>(&engine)) {
    for (size_t i = 0; i < sharded->layout().params.size(); ++i) add(sharded->wholeParameter(i));
  } else {
    for (const auto& p : engine.module().named_parameters()) add(p.value());
  }
  return h;
}

// A weight two blocks share, or a parameter on another device than the rest: refused by prepare.
void spoil(ZeroNet& net, const Args& args) {
  if (args.tied) net->register_parameter("tied", (*net->blocks)[0]->as<Block>()->fc->weight);
  if (args.meta_param) net->register_parameter("stray", torch::empty({4}, torch::kMeta));
}

}  // namespace

int main(int argc, char** argv) try {
  counting();
  torch::set_num_threads(1);
  const Args args = parse(argc, argv);
  accel::TorchAcceleratorOptions options;
  options.sampler = {.shuffle = true, .seed = 1234, .drop_last = false};
  accel::TorchAccelerator accelerator(options);
  const int rank = accelerator.processIndex();
  torch::manual_seed(7);
  const int64_t n = 32 * args.batch;
  torch::Tensor x = torch::randn({n, 16});
  torch::Tensor y = x.matmul(torch::randn({16, 10})).argmax(1);
  torch::manual_seed(42);
  ZeroNet net(16, args.width, args.depth, 10);
  if (rank == 0 && !args.no_files) {
    c10::Dict<std::string, torch::Tensor> data;
    data.insert("x", x);
    data.insert("y", y);
    saveTensors(args.out + "/data.pt", data);
    saveTensors(args.out + "/init.pt", moduleState(*net, false));
    if (!args.safetensors.empty()) writeSafetensors(args.safetensors, *net);
  }
  spoil(net, args);
  auto model = accelerator.prepare(net);
  auto inner = makeOptimizer(args.optimizer, model->parameters());
  auto optimizer = accelerator.prepareOptimizer(*inner);
  accel::TensorLoader& loader = accelerator.prepare(x, y, static_cast<size_t>(args.batch));
  int64_t step = args.resume.empty() ? 0 : accelerator.loadState(args.resume).value_or(0);
  int64_t rest = 0;
  std::vector<double> seconds;                              // each step's
  CountingAllocator::peak = CountingAllocator::now.load();  // the training's peak: from the prepared state on
  std::ofstream losses(args.out + "/losses-rank" + std::to_string(rank) + ".txt");
  for (int64_t epoch = loader.sampler().epoch(); step < args.steps; loader.setEpoch(++epoch)) {
    while (step < args.steps) {
      auto batch = loader.next();
      if (!batch) break;
      const auto started = std::chrono::steady_clock::now();
      auto scope = accelerator.accumulate();
      std::optional<accel::NoSync> no_sync;
      if (args.nosync) no_sync.emplace(model.engine());
      torch::Tensor loss = torch::nn::functional::cross_entropy(model(batch->input), batch->target);
      accelerator.backward(loss);
      if (args.clip > 0 && accelerator.syncGradients()) accelerator.clipGradNorm(args.clip);
      optimizer.step();
      optimizer.zeroGrad();
      if (accelerator.syncGradients()) rest = CountingAllocator::now.load();
      losses << fmt::format("{:.9g}\n", loss.item<float>()) << std::flush;
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      ++step;
      if (step == args.save_at) accelerator.saveState(args.checkpoint, step);
      if (step == args.die_in_save) {  // killed at some moment of the save
        std::thread([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          std::raise(SIGKILL);
        }).detach();
        accelerator.saveState(args.checkpoint, step);
        std::this_thread::sleep_for(std::chrono::seconds(30));
      }
      if (step == args.die_at) std::raise(SIGKILL);
    }
  }
  std::cout << fmt::format("memory rank {} stage {} peak {} rest {}\n", rank, accelerator.zeroOptions().stage,
                           CountingAllocator::peak.load(), rest);
  if (seconds.size() > 1) {  // the median of the steps after the first
    std::sort(seconds.begin() + 1, seconds.end());
    std::cout << fmt::format("step rank {} median {:.6f}\n", rank, seconds[1 + (seconds.size() - 2) / 2]);
  }
  if (!args.export_file.empty()) accelerator.exportState(args.export_file);
  if (args.no_files) {  // a model too big to write twice: its bytes' digest instead
    std::cout << fmt::format("digest rank {} {:016x}\n", rank, digest(model.engine()));
  } else {
    saveTensors(args.out + "/final-rank" + std::to_string(rank) + ".pt", moduleState(*model.module(), false));
  }
  return 0;
} catch (const accel::Error&) {
  throw;  // out of main on purpose: the runtime prints it with its hint and exits with its status
} catch (const std::exception& e) {
  std::cerr << "zero_worker: " << e.what() << "\n";
  return 1;
}
