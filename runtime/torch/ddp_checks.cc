// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/ddp_checks.h"

#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/state/accelerator.h"
#include "runtime/torch/tensor_view.h"

namespace accel {

namespace {

struct Entry {
  std::string kind, name, shape, dtype;
};

std::vector<Entry> describe(const torch::nn::Module& module) {
  std::vector<Entry> out;
  for (const auto& p : module.named_parameters(true)) {
    out.push_back({"parameter", p.key(), shapeText(p.value().sizes()), c10::toString(p.value().scalar_type())});
  }
  for (const auto& b : module.named_buffers(true)) {
    out.push_back({"buffer", b.key(), shapeText(b.value().sizes()), c10::toString(b.value().scalar_type())});
  }
  return out;
}

std::string encode(const std::vector<Entry>& entries) {
  std::string text;
  for (const auto& e : entries) text += e.kind + '\t' + e.name + '\t' + e.shape + '\t' + e.dtype + '\n';
  return text;
}

std::vector<Entry> decode(const std::string& text) {
  std::vector<Entry> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    Entry e;
    std::istringstream fields(line);
    std::getline(fields, e.kind, '\t');
    std::getline(fields, e.name, '\t');
    std::getline(fields, e.shape, '\t');
    std::getline(fields, e.dtype, '\t');
    out.push_back(e);
  }
  return out;
}

// The first difference between rank 0's entries and rank r's, or "".
std::string difference(const std::vector<Entry>& zero, const std::vector<Entry>& other, int r) {
  for (size_t i = 0; i < std::min(zero.size(), other.size()); ++i) {
    const Entry &a = zero[i], &b = other[i];
    if (a.kind != b.kind || a.name != b.name) {
      return fmt::format("{} #{} is {} '{}' on rank 0 but {} '{}' on rank {}", a.kind, i, a.kind, a.name, b.kind,
                         b.name, r);
    }
    if (a.shape != b.shape || a.dtype != b.dtype) {
      return fmt::format("{} '{}' has shape {} ({}) on rank 0 but {} ({}) on rank {}", a.kind, a.name, a.shape, a.dtype,
                         b.shape, b.dtype, r);
    }
  }
  if (zero.size() != other.size()) {
    return fmt::format("rank 0's module has {} parameters and buffers, rank {}'s has {}", zero.size(), r, other.size());
  }
  return "";
}

}  // namespace

void checkModuleDevice(const torch::nn::Module& module, const std::string& device) {
  const auto check = [&](const std::string& kind, const std::string& name, const at::Tensor& t) {
    if (t.device().str() != device) {
      throw Error(
          fmt::format("DDP: {} '{}' is on {} but the Accelerator's device is {}", kind, name, t.device().str(), device),
          fmt::format("move the model first: model->to(accelerator.device()) (here {})", device));
    }
  };
  for (const auto& p : module.named_parameters(true)) check("parameter", p.key(), p.value());
  for (const auto& b : module.named_buffers(true)) check("buffer", b.key(), b.value());
}

void checkSameModuleOnEveryRank(const torch::nn::Module& module, Accelerator& accelerator) {
  const std::string mine = encode(describe(module));
  const std::vector<int64_t> lengths = accelerator.gather(std::vector<int64_t>{static_cast<int64_t>(mine.size())});
  const std::vector<uint8_t> all = accelerator.gather(std::vector<uint8_t>(mine.begin(), mine.end()));
  std::vector<std::vector<Entry>> ranks;
  size_t offset = 0;
  for (int64_t n : lengths) {
    ranks.push_back(
        decode(std::string(all.begin() + static_cast<long>(offset), all.begin() + static_cast<long>(offset + n))));
    offset += static_cast<size_t>(n);
  }
  for (size_t r = 1; r < ranks.size(); ++r) {
    const std::string diff = difference(ranks[0], ranks[r], static_cast<int>(r));
    if (!diff.empty()) {
      throw Error("DDP: the ranks wrapped different modules: " + diff,
                  "every rank must build the same architecture (the same constructor arguments) before wrapping it");
    }
  }
}

std::vector<bool> reachedParameters(const std::vector<at::Tensor>& outputs,
                                    const std::vector<GradAccumulatorPtr>& accumulators) {
  std::unordered_set<const torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> stack;
  for (const auto& t : outputs) {
    if (t.defined() && t.grad_fn()) stack.push_back(t.grad_fn().get());
  }
  while (!stack.empty()) {
    torch::autograd::Node* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second) continue;
    for (const auto& edge : node->next_edges()) {
      if (edge.function) stack.push_back(edge.function.get());
    }
  }
  std::vector<bool> reached;
  for (const auto& a : accumulators) reached.push_back(seen.count(a.get()) != 0);
  return reached;
}

Error unusedParametersError(const std::vector<std::string>& names, int rank) {
  return Error(fmt::format("DDP: parameter(s) {} received no gradient in this backward pass on rank {}; their buckets "
                           "cannot be reduced",
                           fmt::join(names, ", "), rank),
               "use every parameter in the loss, set requires_grad(false) on those you do not train, or wrap with "
               "DdpOptions{.find_unused_parameters = true}");
}

}  // namespace accel
