// SPDX-License-Identifier: Apache-2.0
// accel-train: the reference data-parallel trainer. `accel launch --cpu --num_processes 2
// build/bin/accel-train` trains an MLP on a generated 10-class data set with every part of the
// runtime: bucketed gradient sync overlapping backward, mixed precision (loss scaler for fp16),
// gradient accumulation, checkpoints every N steps and --resume, metrics, gather_for_metrics.
// With a CUDA device (and a build with CUDA), forward, backward and the optimizer run in kernels
// (apps/train/mlp_cuda.h) and the gradients are reduced over NCCL. Options: train_args.h.
#include <chrono>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "apps/train/mlp.h"
#include "apps/train/mlp_cuda.h"
#include "apps/train/tensor_blobs.h"
#include "apps/train/train_args.h"
#include "lib/common/atomic_file.h"
#include "lib/common/strings.h"
#include "runtime/amp/loss_scaler.h"
#include "runtime/amp/precision.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/ddp/reducer.h"
#include "runtime/metrics/tracker.h"
#include "runtime/state/accelerator.h"

using namespace accel;
using namespace accel::train;

namespace {

struct Trainer {
  Args a;
  Accelerator& acc;
  Dataset train, test;
  Mlp model;
  std::vector<Mlp::Slot> slots;  // where each reducer gradient lands in the parameters
  std::string precision;
  MasterWeights weights;  // fp32 masters (updated, saved) and the rounded working copy (forward)
  std::vector<std::vector<float>> momentum;
  bool gpu;  // forward, backward and optimizer in CUDA kernels, gradients reduced over NCCL
  Reducer reducer;
  std::vector<float*> grads;  // the reducer's gradient views, by slot
  std::vector<size_t> counts;
  LossScaler scaler;
  std::unique_ptr<CudaMlp> cuda;  // the CUDA path's model, when `gpu`
  int accumulation;
  long step = 0;
  std::vector<size_t> order;  // this epoch's sample permutation (batchFor)
  long order_epoch = -1;
  std::vector<float> x, h, logits;  // CPU path scratch, reused across micro-batches
  std::vector<int32_t> y;

  Trainer(Args args, Accelerator& accelerator)
      : a(std::move(args)),
        acc(accelerator),
        model(a.hidden, a.seed, a.grad_blocks),
        precision(a.mixed.empty() ? acc.mixedPrecision() : a.mixed),
        weights(model.params, parsePrecision(precision)),
        gpu(useGpu(acc)),
        reducer(gpu ? acc.deviceProcessGroup().backend() : acc.processGroup().backend(), model.counts(),
                {.first_bucket_bytes = static_cast<size_t>(a.first_bucket_mb * (1 << 20)),
                 .bucket_bytes = static_cast<size_t>(a.bucket_mb * (1 << 20)),
                 .device = gpu ? DeviceType::CUDA : DeviceType::CPU,
                 .device_index = acc.device().index}),
        scaler(LossScalerOptions{.enabled = precision == "fp16"}) {  // bf16 keeps fp32's range
    accumulation = a.accumulation > 0 ? a.accumulation : acc.gradientAccumulationSteps();
    const size_t world = static_cast<size_t>(acc.numProcesses());
    if (a.batch % (world * static_cast<size_t>(accumulation)) != 0) {
      throw Error(fmt::format("--batch_size {} must divide into {} processes x {} accumulation steps", a.batch, world,
                              accumulation));
    }
    makeDataset(2400, 600, train, test);
    if (a.batch > train.size()) {
      throw Error(fmt::format("--batch_size {} exceeds the {} training samples", a.batch, train.size()),
                  "use a smaller --batch_size");
    }
    slots = model.slots();
    counts = model.counts();
    for (size_t i = 0; i < slots.size(); ++i) grads.push_back(reducer.gradient(i));
    for (const auto& p : weights.masters()) momentum.emplace_back(p.size(), 0.0f);
    if (gpu) cuda = std::make_unique<CudaMlp>(model, train, acc.device().index, precision != "no", precision == "bf16");
  }

  // The device the Accelerator picked (a CUDA device unless --cpu / ACCELERATE_USE_CPU), when
  // this build has the trainer's kernels.
  static bool useGpu(const Accelerator& acc) {
    if (acc.device().type != DeviceType::CUDA) return false;
    if (CudaMlp::built()) return true;
    acc.print("note: a CUDA device is visible but accel-train was built without CUDA kernels: training on the CPU");
    return false;
  }

  // Host <-> device copies of the parameters and momentum (no-ops on the CPU path).
  void toDevice() {
    if (cuda) cuda->upload(weights.masters(), momentum);
  }
  void toHost() {
    if (cuda) cuda->download(weights.masters(), momentum);
  }

  // Resuming is decided once, by rank 0, and checked by every rank (checkpoint.h).
  void restoreOrBroadcast() {
    std::optional<CheckpointPart> resumed;
    if (a.resume && !a.checkpoint_dir.empty())
      resumed = resumeCheckpoint(acc.processGroup().backend(), a.checkpoint_dir, OtherWorld::Replicated);
    if (resumed) {
      CheckpointPart& part = *resumed;
      loadBytes(weights.masters(), blob(part, "params", a.checkpoint_dir), "parameters");
      loadBytes(momentum, blob(part, "momentum", a.checkpoint_dir), "momentum buffers");
      scaler.loadState(blob(part, "scaler", a.checkpoint_dir));
      acc.loadRngState(blob(part, "rng", a.checkpoint_dir));
      step = part.step;
      acc.print(fmt::format("resumed from step {} ({})", step, a.checkpoint_dir));
      if (part.saved_world != acc.numProcesses()) {  // the model is DDP's: the same on every rank
        acc.print(
            fmt::format("the checkpoint was saved by {} processes, this run has {}: rank r took rank r mod {}'s "
                        "part (its random generator); the data resumes at the same global sample",
                        part.saved_world, acc.numProcesses(), part.saved_world));
      }
    } else {
      if (a.resume) {  // one command line for every round of a restarted job, the first included
        acc.print(a.checkpoint_dir.empty()
                      ? "--resume without --checkpoint_dir: starting from step 0"
                      : fmt::format("no checkpoint in {} yet: starting from step 0", a.checkpoint_dir));
      }
      std::vector<Tensor> tensors;
      for (auto& p : weights.masters()) tensors.push_back(cpuTensor(p.data(), p.size()));
      broadcastParameters(acc.processGroup().backend(), tensors);  // every rank starts from rank 0's weights
    }
    toDevice();
  }

  // Global sample indices of micro-batch `micro` of step `s` for this rank: a fixed permutation
  // per epoch, so resuming at any step sees the same data.
  std::vector<size_t> batchFor(long s, int micro) {
    const size_t per_epoch = train.size() / a.batch;
    const long epoch = static_cast<long>(static_cast<size_t>(s) / per_epoch);
    if (epoch != order_epoch) {  // shuffled once per epoch, not per micro-batch
      order.resize(train.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937_64(a.seed * 1000003 + static_cast<uint64_t>(epoch)));
      order_epoch = epoch;
    }
    const size_t micro_size = a.batch / static_cast<size_t>(accumulation);
    const size_t local = micro_size / static_cast<size_t>(acc.numProcesses());
    const size_t start = (static_cast<size_t>(s) % per_epoch) * a.batch + static_cast<size_t>(micro) * micro_size +
                         static_cast<size_t>(acc.processIndex()) * local;
    return {order.begin() + static_cast<long>(start), order.begin() + static_cast<long>(start + local)};
  }

  // Forward and backward of one micro-batch into the reducer's gradients; its summed loss.
  double forwardBackward(const std::vector<size_t>& idx) {
    const size_t divisor = a.batch / static_cast<size_t>(acc.numProcesses());
    auto grad = [this](size_t i) { return reducer.gradient(i); };
    auto ready = [this](size_t i) { reducer.markReady(i); };
    if (cuda) return cuda->forwardBackward(idx, scaler.scale(), divisor, grad, ready);
    x.clear();
    y.clear();
    for (size_t i : idx) {
      x.insert(x.end(), &train.x[i * kFeatures], &train.x[i * kFeatures] + kFeatures);
      y.push_back(train.y[i]);
    }
    const auto& working = weights.working();
    const double loss =
        model.forward(working, x.data(), y.data(), idx.size(), h, logits) * static_cast<double>(idx.size());
    model.backward(working, x.data(), y.data(), idx.size(), h, logits, scaler.scale(), divisor, grad, ready);
    return loss;
  }

  // Unscale, agree on overflow across ranks (every rank skips the same steps), SGD with momentum.
  void optimizerStep() {
    if (cuda) {
      if (scaler.enabled()) scaler.recordOverflow(cuda->unscale(grads, counts, scaler.inverseScale()));
      if (scaler.step(&acc.processGroup().backend())) cuda->sgd(slots, grads, a.lr);
      return;
    }
    for (size_t i = 0; i < slots.size(); ++i) scaler.unscale(grads[i], counts[i]);
    if (!scaler.step(&acc.processGroup().backend())) return;
    auto& masters = weights.masters();
    for (size_t i = 0; i < slots.size(); ++i) {
      const float* g = grads[i];
      float* m = momentum[slots[i].param].data() + slots[i].offset;
      float* w = masters[slots[i].param].data() + slots[i].offset;
      for (size_t k = 0; k < slots[i].count; ++k) {
        m[k] = 0.9f * m[k] + g[k];
        w[k] -= a.lr * m[k];
      }
    }
  }

  float trainStep() {
    reducer.zeroGradients();
    double loss_sum = 0;
    for (int micro = 0; micro < accumulation; ++micro) {
      reducer.setSync(micro == accumulation - 1 && !a.benchmark_no_sync);  // no communication on accumulation steps
      loss_sum += forwardBackward(batchFor(step, micro));
      reducer.finish();
    }
    optimizerStep();
    std::vector<double> loss = {loss_sum};
    acc.reduce(loss);
    return static_cast<float>(loss[0] / static_cast<double>(a.batch));
  }

  void checkpoint() {
    toHost();
    CheckpointPart part{step,
                        {{"params", bytesOf(weights.masters())},
                         {"momentum", bytesOf(momentum)},
                         {"scaler", scaler.state()},
                         {"rng", acc.rngState()}}};
    std::string where = saveCheckpoint(acc.processGroup().backend(), a.checkpoint_dir, part);
    acc.print(fmt::format("checkpoint saved at step {}: {}", step, where));
  }

  // One line per rank: the mean step time and how much of the gradient all-reduce was hidden.
  void profile(double seconds, long steps) {
    const auto& t = reducer.timing();
    const std::string hidden = acc.numProcesses() > 1 && t.communication > 0
                                   ? fmt::format("{:.1f}%", (1.0 - t.exposed / t.communication) * 100)
                                   : std::string("n/a (nothing to reduce with 1 process)");
    std::cout << fmt::format(
                     "profile rank {}: {} buckets, step {:.3f} ms, all-reduce {:.3f} ms/step, exposed {:.3f} ms/step, "
                     "hidden {}",
                     acc.processIndex(), reducer.buckets().size(), seconds / steps * 1e3, t.communication / steps * 1e3,
                     t.exposed / steps * 1e3, hidden)
              << std::endl;
  }

  double evaluate() {
    std::vector<int64_t> all(test.size());
    std::iota(all.begin(), all.end(), 0);
    auto mine = acc.splitBetweenProcesses(all, true);
    x.clear();
    for (int64_t i : mine)
      x.insert(x.end(), &test.x[static_cast<size_t>(i) * kFeatures],
               &test.x[static_cast<size_t>(i) * kFeatures] + kFeatures);
    if (cuda) logits = cuda->logits(x.data(), mine.size());
    if (!gpu) model.forward(weights.working(), x.data(), nullptr, mine.size(), h, logits);
    std::vector<int32_t> correct;
    for (size_t s = 0; s < mine.size(); ++s) {
      auto* row = &logits[s * kClasses];
      int32_t guess = static_cast<int32_t>(std::max_element(row, row + kClasses) - row);
      correct.push_back(guess == test.y[static_cast<size_t>(mine[s])] ? 1 : 0);
    }
    auto gathered = acc.gatherForMetrics(correct, test.size());
    return std::accumulate(gathered.begin(), gathered.end(), 0.0) / static_cast<double>(gathered.size());
  }

  void run() {
    // Refused at once, before any work, when another job owns the directory.
    if (!a.checkpoint_dir.empty()) claimCheckpointDirectory(acc.processGroup().backend(), a.checkpoint_dir);
    restoreOrBroadcast();
    if (a.benchmark_no_sync) {
      acc.print(
          "warning: --benchmark_no_sync: gradients are never reduced, ranks train apart (a timing baseline only)");
    }
    JsonlTracker tracker(acc.isMainProcess() ? a.log_file : "");
    ProgressBar bar(a.steps);
    const bool show = acc.isMainProcess() && bar.enabled();
    auto start = std::chrono::steady_clock::now();
    const long first = step;
    float loss = 0;
    while (step < a.steps) {
      const auto step_start = std::chrono::steady_clock::now();
      loss = trainStep();
      ++step;
      if (a.step_pause > 0) std::this_thread::sleep_until(step_start + std::chrono::duration<double>(a.step_pause));
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double rate = static_cast<double>((step - first) * static_cast<long>(a.batch)) / std::max(seconds, 1e-9);
      if (acc.isMainProcess())
        tracker.log({{"loss", loss}, {"lr", a.lr}, {"loss_scale", scaler.scale()}, {"samples_per_s", rate}}, step);
      if (show) bar.update(step, loss, rate);
      if (!show && a.log_every > 0 && (step % a.log_every == 0 || step == a.steps)) {
        acc.print(fmt::format("step {} loss {:.4f} ({:.0f} samples/s)", step, loss, rate));
      }
      if (a.checkpoint_every > 0 && !a.checkpoint_dir.empty() && step % a.checkpoint_every == 0) checkpoint();
    }
    if (show) bar.finish();
    if (a.profile)
      profile(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), step - first);
    double accuracy = evaluate();
    toHost();
    const auto bytes = bytesOf(weights.masters());
    acc.print(fmt::format("test accuracy {:.4f} after {} steps ({} processes on {}, precision {}, accumulation {})",
                          accuracy, step, acc.numProcesses(), gpu ? acc.device().str() : "cpu", precision,
                          accumulation));
    acc.print(fmt::format("weights crc32 {:08x}", crc32(bytes.data(), bytes.size())));
    if (acc.isMainProcess() && !a.save_weights.empty()) {
      writeFileAtomic(a.save_weights, std::string(bytes.begin(), bytes.end()));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  Args args = parseArgs(argc, argv);
  try {
    Accelerator acc({.cpu = args.cpu});
    Trainer trainer(args, acc);
    trainer.run();
    return 0;
  } catch (const Error& e) {  // with its fix, where it names one
    std::cerr << "accel-train: error: " << e.what() << "\n"
              << (e.hint().empty() ? "" : "accel-train:   " + e.hint() + "\n");
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "accel-train: error: " << e.what() << "\n";
    return 1;
  }
}
