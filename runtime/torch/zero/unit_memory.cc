// SPDX-License-Identifier: Apache-2.0
// Gathering and releasing a unit's parameters (engine_state.h). A released parameter keeps its
// tensor, shape and autograd identity; only its storage's memory goes (FSDP's storage resize to
// 0), so the views autograd saved follow it when it comes back. Gathered values are written
// through separate tensors on the same memory: the parameter's version counter does not move,
// and the graph that saved it stays valid.
#include <fmt/format.h>
#include <torch/torch.h>

#include "lib/common/error.h"
#include "runtime/torch/tensor_view.h"
#include "runtime/torch/zero/engine_state.h"

namespace accel {

namespace {

c10::StorageImpl* storageOf(const at::Tensor& t) { return t.storage().unsafeGetStorageImpl(); }

size_t paramBytes(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// The parameter's memory as a flat tensor of its own (no autograd, no version counter shared).
at::Tensor flatAlias(const at::Tensor& full) {
  return torch::from_blob(full.data_ptr(), {full.numel()}, full.options().requires_grad(false));
}

}  // namespace

// This rank's rows of the unit's parameters, padded, as one flat tensor on the device.
at::Tensor ShardedEngine::State::packShards(size_t u) const {
  const ShardUnit& unit = layout.units[u];
  const at::Tensor& first = layout.params[unit.params.front()].full;
  at::Tensor send = torch::zeros({unit.shard_numel}, first.options().requires_grad(false));
  for (size_t i : unit.params) {
    const ShardedParam& p = layout.params[i];
    const int64_t n = p.rowsOf(rank) * p.row_numel;
    if (n > 0) send.narrow(0, p.offset, n).copy_(shards[i].reshape({-1}));
  }
  return send;
}

void ShardedEngine::State::gatherUnit(size_t u) {
  GatherOnUsePause pause;
  torch::NoGradGuard no_grad;
  const ShardUnit& unit = layout.units[u];
  if (unit.params.empty()) return;
  at::Tensor send = packShards(u);
  at::Tensor receive = torch::empty({unit.shard_numel * world}, send.options());
  data->allGather(viewOf(send, "a shard"), viewOf(receive, "a gathered unit"))->wait();
  for (size_t i : unit.params) {
    const ShardedParam& p = layout.params[i];
    c10::StorageImpl* storage = storageOf(p.full);
    if (storage->nbytes() == 0 && paramBytes(p.full) > 0) {
      storage->set_data_ptr_noswap(storage->allocator()->allocate(paramBytes(p.full)));
      storage->set_nbytes(paramBytes(p.full));
    }
    at::Tensor whole = flatAlias(p.full);
    for (int r = 0; r < world; ++r) {
      const int64_t n = p.rowsOf(r) * p.row_numel;
      if (n == 0) continue;
      whole.narrow(0, p.firstRow(r) * p.row_numel, n).copy_(receive.narrow(0, r * unit.shard_numel + p.offset, n));
    }
  }
  units[u].gathered = true;
  ++gathers;
}

void ShardedEngine::State::releaseUnit(size_t u) {
  if (zero.stage < 3 || !units[u].gathered) return;
  for (size_t i : layout.units[u].params) storageOf(layout.params[i].full)->reset();
  units[u].gathered = false;
}

void ShardedEngine::State::releaseAll() {
  for (size_t u = 0; u < units.size(); ++u) releaseUnit(u);
}

// An operator is about to read a released parameter of unit `u`. In forward, the unit before
// it is done: released, the root unit excepted.
void ShardedEngine::State::gatherForUse(size_t u) {
  if (units[u].gathered) return;
  if (in_forward) {
    for (size_t v = 1; v < units.size(); ++v) {
      if (v != u) releaseUnit(v);
    }
  }
  gatherUnit(u);
}

// Each parameter's rows for this rank: a view of the parameter (stages 1-2 on the device) or
// memory of its own (stage 3, offloaded shards); stage 3 then releases the parameters.
void ShardedEngine::State::shardParameters() {
  torch::NoGradGuard no_grad;
  for (const ShardUnit& unit : layout.units) {
    for (size_t i : unit.params) {
      const at::Tensor& f = layout.params[unit.params.front()].full;
      const ShardedParam& p = layout.params[i];
      if (p.full.scalar_type() != f.scalar_type()) {
        throw Error(
            fmt::format("parameters '{}' ({}) and '{}' ({}) are in one sharding unit '{}' with different dtypes",
                        layout.params[unit.params.front()].name, c10::toString(f.scalar_type()), p.name,
                        c10::toString(p.full.scalar_type()), unit.name),
            "give a unit's parameters one dtype (convert the module with ->to(dtype))");
      }
      const bool whole_storage = p.full.is_contiguous() && p.full.storage_offset() == 0 &&
                                 p.full.storage().nbytes() == paramBytes(p.full) &&
                                 p.full.storage().allocator() != nullptr;
      if (own_shards && !whole_storage) {
        throw Error(fmt::format("parameter '{}' does not own its memory (a view, or memory from outside torch's "
                                "allocator): ZeRO stage 3 cannot release it",
                                p.name),
                    "register a tensor of its own (e.g. register_parameter(name, tensor.clone()))");
      }
    }
  }
  for (const ShardedParam& p : layout.params) {
    at::Tensor rows =
        p.full.detach().reshape({-1}).narrow(0, p.firstRow(rank) * p.row_numel, p.rowsOf(rank) * p.row_numel);
    rows = rows.view(p.shardShape(rank));
    if (own_shards) {
      at::Tensor owned = torch::empty(p.shardShape(rank), p.full.options().device(shard_device).requires_grad(false));
      if (shard_device.is_cpu() && !device.is_cpu()) owned = owned.pin_memory();
      owned.copy_(rows);
      rows = owned;
    }
    shards.push_back(rows);
  }
  if (zero.stage < 3) return;
  for (size_t u = 0; u < layout.units.size(); ++u) {
    for (size_t i : layout.units[u].params) registerGatherOnUse(storageOf(layout.params[i].full), this, u);
  }
  releaseAll();
}

}  // namespace accel
