// SPDX-License-Identifier: Apache-2.0
// TorchAccelerator's gathers, checkpoints and trackers (torch_accelerator.h).
#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "lib/common/error.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/metrics/trackers.h"
#include "runtime/torch/archive_bytes.h"
#include "runtime/torch/scheduler_steps.h"
#include "runtime/torch/state_export.h"
#include "runtime/torch/tensor_view.h"
#include "runtime/torch/torch_accelerator.h"
#include "runtime/torch/zero/sharded_state.h"

namespace accel {

namespace {

void fromArchive(const std::vector<uint8_t>& bytes, const std::function<void(torch::serialize::InputArchive&)>& read) {
  torch::serialize::InputArchive archive = openArchive(bytes);
  read(archive);
}

// Module::load's layout (its own tensors by name, each child in a sub-archive) read into the
// existing tensors with copy_: Module::load replaces their storage (Tensor::set_), which gives each
// parameter a new gradient accumulator and leaves any other holder of the old storage stale.
void loadModuleInPlace(torch::nn::Module& module, torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters(false)) {
    at::Tensor saved;
    archive.read(p.key(), saved);
    p.value().copy_(saved);
  }
  for (auto& b : module.named_buffers(false)) {
    at::Tensor saved;
    archive.read(b.key(), saved, /*is_buffer=*/true);
    b.value().copy_(saved);
  }
  for (const auto& child : module.named_children()) {
    torch::serialize::InputArchive child_archive;
    archive.read(child.key(), child_archive);
    loadModuleInPlace(*child.value(), child_archive);
  }
}

std::vector<uint8_t> u64Bytes(uint64_t v) {
  std::vector<uint8_t> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

uint64_t u64From(const std::vector<uint8_t>& b, const std::string& what) {
  uint64_t v = 0;
  if (b.size() != sizeof v) throw Error(fmt::format("checkpoint part '{}': {} bytes, expected 8", what, b.size()));
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

const std::vector<uint8_t>& blob(const CheckpointPart& part, const std::string& name) {
  auto it = part.blobs.find(name);
  if (it == part.blobs.end()) {
    throw Error(fmt::format("the checkpoint has no '{}' (it was saved by a program with other parts)", name),
                "resume with the same models, optimizers, schedulers and loaders prepared in the same order");
  }
  return it->second;
}

}  // namespace

at::Tensor TorchAccelerator::gather(const at::Tensor& tensor) {
  const at::Tensor mine = tensor.contiguous();
  const std::vector<int64_t> rows = base_.gather(std::vector<int64_t>{mine.size(0)});
  std::vector<int64_t> shape = mine.sizes().vec();
  const int64_t row_bytes =
      std::accumulate(shape.begin() + 1, shape.end(), static_cast<int64_t>(mine.element_size()), std::multiplies<>());
  int64_t total = 0;
  std::vector<size_t> counts;
  for (int64_t r : rows) {
    total += r;
    counts.push_back(static_cast<size_t>(r * row_bytes));
  }
  shape[0] = total;
  at::Tensor out = torch::empty(shape, mine.options());
  base_.deviceProcessGroup()
      .backend()
      .allGatherV(bytesOf(mine, "gather's tensor"), bytesOf(out, "gather's output"), counts)
      ->wait();
  return out;
}

at::Tensor TorchAccelerator::gatherForMetrics(const at::Tensor& tensor) {
  return loaders_.empty() ? gather(tensor) : gatherForMetrics(tensor, *loaders_.back());
}

at::Tensor TorchAccelerator::gatherForMetrics(const at::Tensor& tensor, const TensorLoader& loader) {
  at::Tensor all = gather(tensor);
  const DistributedSampler& sampler = loader.sampler();
  const int world = numProcesses();
  const size_t n = static_cast<size_t>(all.size(0) / world), first = loader.position() - n;
  std::vector<std::pair<size_t, int64_t>> keep;  // (position in the epoch's list, row)
  for (int r = 0; r < world; ++r) {
    for (size_t j = 0; j < n; ++j) {
      const size_t at = sampler.listPosition(first + j, r);
      if (!sampler.isPadding(at)) keep.emplace_back(at, static_cast<int64_t>(r * n + j));
    }
  }
  std::sort(keep.begin(), keep.end());
  std::vector<int64_t> rows;
  for (const auto& k : keep) rows.push_back(k.second);
  return all.index_select(0, torch::tensor(rows, torch::kLong).to(all.device()));
}

std::string TorchAccelerator::saveState(const std::string& dir, int64_t step) {
  CheckpointPart part;
  part.step = step;
  for (size_t i = 0; i < models_.size(); ++i) {
    if (auto* sharded = dynamic_cast<ShardedEngine*>(models_[i].get())) {
      saveShardedState(*sharded, i, optimizers_, part);  // this rank's rows, not the whole model
      continue;
    }
    part.blobs["model." + std::to_string(i)] = archiveBytes([&](auto& a) { models_[i]->module().save(a); });
  }
  for (size_t i = 0; i < optimizers_.size(); ++i) {
    part.blobs["optimizer." + std::to_string(i)] = archiveBytes([&](auto& a) { optimizers_[i]->save(a); });
  }
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    part.blobs["scheduler." + std::to_string(i)] = u64Bytes(detail::SchedulerSteps::of(*schedulers_[i]));
  }
  for (size_t i = 0; i < loaders_.size(); ++i) part.blobs["loader." + std::to_string(i)] = loaders_[i]->state();
  part.blobs["scaler"] = scaler_.state();
  part.blobs["rng.torch"] = archiveBytes([](auto& a) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    a.write("state", generator.get_state());
  });
  part.blobs["rng.accel"] = base_.rngState();
  part.blobs["micro_step"] = u64Bytes(static_cast<uint64_t>(micro_step_));
  return saveCheckpoint(base_.processGroup().backend(), dir, part);
}

std::optional<int64_t> TorchAccelerator::loadState(const std::string& dir) {
  // The models and optimizers are DDP's, the same on every rank: another world size loads too.
  std::optional<CheckpointPart> part = resumeCheckpoint(base_.processGroup().backend(), dir, OtherWorld::Replicated);
  if (!part) return std::nullopt;
  for (size_t i = 0; i < models_.size(); ++i) {
    if (dynamic_cast<ShardedEngine*>(models_[i].get())) continue;
    if (part->blobs.count("zero." + std::to_string(i))) {
      throw UsageError(fmt::format("the checkpoint's model {} was saved sharded (ZeRO); this run does not shard it", i),
                       "resume with the ZeRO stage it was saved with, or export the whole state and load that");
    }
    fromArchive(blob(*part, "model." + std::to_string(i)),
                [&](auto& a) { loadModuleInPlace(models_[i]->module(), a); });
  }
  for (size_t i = 0; i < optimizers_.size(); ++i) {
    fromArchive(blob(*part, "optimizer." + std::to_string(i)), [&](auto& a) { optimizers_[i]->load(a); });
  }
  for (size_t i = 0; i < models_.size(); ++i) {  // after the optimizers: their state of the shards
    if (auto* sharded = dynamic_cast<ShardedEngine*>(models_[i].get()))
      loadShardedState(*sharded, i, optimizers_, *part);
  }
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const std::string name = "scheduler." + std::to_string(i);
    detail::SchedulerSteps::of(*schedulers_[i]) = static_cast<unsigned>(u64From(blob(*part, name), name));
  }
  for (size_t i = 0; i < loaders_.size(); ++i) {
    loaders_[i]->loadState(blob(*part, "loader." + std::to_string(i)), part->saved_world);
  }
  scaler_.loadState(blob(*part, "scaler"));
  fromArchive(blob(*part, "rng.torch"), [](auto& a) {
    at::Tensor state;
    a.read("state", state);
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares the default's state
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  });
  base_.loadRngState(blob(*part, "rng.accel"));
  micro_step_ = static_cast<int64_t>(u64From(blob(*part, "micro_step"), "micro_step"));
  return part->step;
}

void TorchAccelerator::exportState(const std::string& path) {
  std::vector<ModelEngine*> models;
  for (auto& m : models_) models.push_back(m.get());
  const c10::impl::GenericDict state = wholeState(models, optimizers_, processIndex(), 0);
  if (isMainProcess()) writeTorchFile(path, state);
  waitForEveryone();
}

void TorchAccelerator::initTrackers(const std::string& project, const TrackerConfig& config) {
  if (!isMainProcess()) return;
  trackers_ = std::make_unique<Trackers>(options_.log_with, options_.project_dir);
  trackers_->init(project, config);
}

void TorchAccelerator::log(const std::map<std::string, double>& values, int64_t step) {
  if (trackers_) trackers_->log(values, static_cast<long>(step));
}

}  // namespace accel
