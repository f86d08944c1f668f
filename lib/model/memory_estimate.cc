// SPDX-License-Identifier: Apache-2.0
#include "lib/model/memory_estimate.h"

#include <map>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

bool allDigits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// Natural order: numeric components compare as numbers, so `h.2` comes before `h.10`.
bool naturalLess(const std::string& a, const std::string& b) {
  std::vector<std::string> x = split(a, '.'), y = split(b, '.');
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i] == y[i]) continue;
    if (allDigits(x[i]) && allDigits(y[i]) && x[i].size() != y[i].size()) return x[i].size() < y[i].size();
    return x[i] < y[i];
  }
  return x.size() < y.size();
}

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string layerOf(const std::string& tensor_name) {
  std::vector<std::string> parts = split(tensor_name, '.');
  for (size_t i = 1; i < parts.size(); ++i) {
    if (allDigits(parts[i])) return join({parts.begin(), parts.begin() + static_cast<long>(i) + 1}, ".");
  }
  size_t dot = tensor_name.rfind('.');
  return dot == std::string::npos ? tensor_name : tensor_name.substr(0, dot);
}

uint64_t accelerateBits(const TensorEntry& tensor) {
  switch (tensor.dtype->kind) {
    case DtypeKind::Float: return tensor.elements * 32;
    case DtypeKind::Bool: return tensor.elements;
    default: return tensor.elements * static_cast<uint64_t>(tensor.dtype->bits);
  }
}

ModelSizes measureModel(const ModelFiles& model) {
  ModelSizes sizes;
  std::map<std::string, LayerSize> layers;
  for (const auto& shard : model.shards) {
    for (const auto& t : shard.tensors) {
      const bool parameter = t.dtype->kind == DtypeKind::Float || t.dtype->kind == DtypeKind::Complex;
      const bool python_float = t.dtype->kind == DtypeKind::Bool;
      LayerSize& layer = layers[layerOf(t.name)];
      for (AccelerateSize* size : {&layer.size, &sizes.total}) {
        size->bits += accelerateBits(t);
        size->python_float |= python_float;
      }
      if (parameter) layer.parameters += t.elements, sizes.parameters += t.elements;
      sizes.stored_bytes += t.end - t.begin;
      ++sizes.tensors;
    }
  }
  for (auto& [name, layer] : layers) {
    layer.name = name;
    const LayerSize& best = sizes.largest;
    bool first = best.name.empty();
    if (first || layer.size.bits > best.size.bits ||
        (layer.size.bits == best.size.bits && naturalLess(name, best.name))) {
      sizes.largest = layer;
    }
  }
  sizes.layers = layers.size();
  return sizes;
}

BytesPerParameter bytesPerParameter(Precision precision) {
  return precision == Precision::Mixed ? BytesPerParameter{2, 2, 12} : BytesPerParameter{4, 4, 8};
}

std::vector<StrategyEstimate> estimateStrategies(const ModelSizes& sizes, const TrainingSetup& setup) {
  if (setup.processes < 1 || setup.machines < 1) {
    throw UsageError(
        fmt::format("{} process(es) on {} machine(s): both must be at least 1", setup.processes, setup.machines));
  }
  if (setup.processes % setup.machines != 0) {
    throw UsageError(
        fmt::format("--num_processes {} is not a multiple of --num_machines {}", setup.processes, setup.machines),
        "hybrid sharding needs the same number of processes on every machine");
  }
  const auto [p, g, k] = bytesPerParameter(setup.precision);
  const uint64_t P = sizes.parameters;
  const uint64_t N = static_cast<uint64_t>(setup.processes);
  const uint64_t per_machine = N / static_cast<uint64_t>(setup.machines);
  const uint64_t gathered = p * sizes.largest.parameters;
  const uint64_t states = (p + g + k) * P;
  return {
      {"DDP", states},
      {"DeepSpeed ZeRO-1", (p + g) * P + ceilDiv(k * P, N)},
      {"DeepSpeed ZeRO-2", p * P + ceilDiv((g + k) * P, N)},
      {"DeepSpeed ZeRO-3", ceilDiv(states, N) + gathered},
      {"FSDP full shard", ceilDiv(states, N) + gathered},
      {"FSDP hybrid shard", ceilDiv(states, per_machine) + gathered},
  };
}

}  // namespace accel
