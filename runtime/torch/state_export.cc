// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/state_export.h"

#include <cstdio>
#include <map>

#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "lib/common/error.h"
#include "runtime/torch/archive_bytes.h"
#include "runtime/torch/optimizer_state.h"
#include "runtime/torch/zero/sharded_engine.h"

namespace accel {

namespace {

using Dict = c10::impl::GenericDict;

Dict stringDict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

struct Holder {
  ShardedEngine* engine = nullptr;  // null: a whole tensor (DDP)
  size_t index = 0;
};

// Every field of a parameter's optimizer state, whole: a sharded tensor gathered by rows.
Dict stateFields(const torch::optim::OptimizerParamState& state, const at::Tensor& param, const Holder& h, bool keep) {
  torch::serialize::InputArchive in = openArchive(archiveBytes([&](auto& out) { state.serialize(out); }));
  Dict fields = stringDict();
  for (const std::string& key : in.keys()) {
    at::Tensor t;
    if (in.try_read(key, t)) {
      const bool rows =
          h.engine && t.dim() == param.dim() && t.dim() > 0 && t.sizes().slice(1) == param.sizes().slice(1);
      at::Tensor whole = rows ? h.engine->wholeRows(h.index, t) : t.detach().to(at::kCPU, false, true);
      if (keep) fields.insert(key, whole);
    } else {
      c10::IValue v;
      in.read(key, v);
      if (keep) fields.insert(key, v);
    }
  }
  return fields;
}

}  // namespace

Dict wholeState(const std::vector<ModelEngine*>& models, const std::vector<torch::optim::Optimizer*>& optimizers,
                int rank, int root) {
  const bool keep = rank == root;
  torch::NoGradGuard no_grad;
  Dict model = stringDict();
  std::map<const c10::TensorImpl*, Holder> holders;
  for (size_t m = 0; m < models.size(); ++m) {
    const std::string prefix = models.size() > 1 ? fmt::format("model{}.", m) : "";
    auto* sharded = dynamic_cast<ShardedEngine*>(models[m]);
    if (sharded) {
      for (size_t i = 0; i < sharded->layout().params.size(); ++i) {
        at::Tensor whole = sharded->wholeRows(i, sharded->shards()[i]);
        if (keep) model.insert(prefix + sharded->layout().params[i].name, whole);
        holders[sharded->shards()[i].unsafeGetTensorImpl()] = {sharded, i};
      }
    }
    for (const auto& p : models[m]->module().named_parameters(true)) {
      if (!sharded && keep) model.insert(prefix + p.key(), p.value().detach().to(at::kCPU, false, true));
    }
    for (const auto& b : models[m]->module().named_buffers(true)) {
      if (keep) model.insert(prefix + b.key(), b.value().detach().to(at::kCPU, false, true));
    }
  }
  c10::impl::GenericList saved_optimizers(c10::AnyType::get());
  for (auto* o : optimizers) {
    Dict state(c10::IntType::get(), c10::AnyType::get());
    c10::impl::GenericList groups(c10::AnyType::get());
    int64_t index = 0;
    for (auto& group : o->param_groups()) {
      c10::impl::GenericList params(c10::AnyType::get());  // an int list would pickle as build_intlist
      for (const auto& p : group.params()) {
        const auto* param_state = optimizerState(*o, p);
        auto h = holders.find(p.unsafeGetTensorImpl());
        if (param_state) {
          Dict fields = stateFields(*param_state, p, h == holders.end() ? Holder{} : h->second, keep);
          if (keep) state.insert(index, fields);
        }
        params.push_back(index++);
      }
      Dict g = stringDict();
      g.insert("lr", group.options().get_lr());
      g.insert("params", params);
      groups.push_back(g);
    }
    Dict saved = stringDict();
    saved.insert("state", state);
    saved.insert("param_groups", groups);
    saved_optimizers.push_back(saved);
  }
  Dict out = stringDict();
  if (!keep) return out;
  out.insert("model", model);
  out.insert("optimizers", saved_optimizers);
  return out;
}

void writeTorchFile(const std::string& path, const Dict& state) {
  std::vector<char> pickle;
  // No tensor table and no type tags: torch.save's own pickle, which weights_only accepts.
  torch::jit::Pickler pickler([&](const char* b, size_t n) { pickle.insert(pickle.end(), b, b + n); }, nullptr, nullptr,
                              nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(state);
  pickler.stop();
  const std::string temporary = fmt::format("{}.tmp.{}", path, getpid());
  try {
    caffe2::serialize::PyTorchStreamWriter writer(temporary);
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
  } catch (const std::exception& e) {
    std::remove(temporary.c_str());
    throw Error(fmt::format("cannot write {}: {}", temporary, e.what()), "check the directory exists and has room");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error(fmt::format("cannot rename {} to {}", temporary, path), "check the directory is writable");
  }
}

}  // namespace accel
