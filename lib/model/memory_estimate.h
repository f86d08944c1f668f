// SPDX-License-Identifier: Apache-2.0
// What a model's tensors weigh, from their safetensors headers alone.
//
// Accelerate's figures (`accelerate estimate-memory`, through calculate_maximum_sizes) are of the
// model built in float32: every floating-point tensor counts 4 bytes an element whatever its
// stored dtype, an integer or complex tensor its own size, a BOOL an eighth of a byte (as
// Accelerate's dtype_byte_size says). Sizes are kept in bits so that eighth stays exact.
//
// A layer is what Accelerate keeps whole: the tensors under one repeated block (the name up to
// and including the first all-digit component after the first, `h.3`, `model.layers.12`,
// `encoder.layer.0`); any other tensor belongs to the module that holds it (its name less the
// last component: `wte.weight` is in `wte`, a top-level tensor is its own). The largest layer is
// the one with the most bytes; on a tie the first in natural order (`h.2` before `h.10`).
//
// Training with Adam, model states per process (the ZeRO paper's accounting; activations,
// buffers of the framework and fragmentation excluded), for P parameters (the floating-point
// elements), L of them in the largest layer, N processes on M machines:
// - mixed precision (bf16/fp16 with fp32 master weights): p = 2 bytes of parameters, g = 2 of
//   gradients, k = 12 of optimizer states (fp32 master copy, Adam's two moments) per parameter;
// - full precision (fp32): p = 4, g = 4, k = 8 (the two moments).
//   DDP               (p + g + k) P
//   ZeRO-1            (p + g) P + k P / N
//   ZeRO-2            p P + (g + k) P / N
//   ZeRO-3, FSDP full (p + g + k) P / N + p L   (the largest layer gathered whole)
//   FSDP hybrid       (p + g + k) P / (N / M) + p L   (sharded within a machine)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/model/model_files.h"

namespace accel {

// An amount in Accelerate's terms. `python_float`: Accelerate's own sum is a Python float (a
// BOOL tensor is in it), which changes how convert_bytes prints a whole number of bytes.
struct AccelerateSize {
  uint64_t bits = 0;
  bool python_float = false;
  double bytes() const { return static_cast<double>(bits) / 8; }
};

struct LayerSize {
  std::string name;
  AccelerateSize size;
  uint64_t parameters = 0;  // its floating-point elements
};

struct ModelSizes {
  size_t tensors = 0;
  uint64_t stored_bytes = 0;  // the tensors' data as the files hold it
  uint64_t parameters = 0;    // floating-point elements: what training updates
  AccelerateSize total;
  LayerSize largest;
  size_t layers = 0;
};

// The layer `tensor_name` belongs to (see above).
std::string layerOf(const std::string& tensor_name);
// One tensor's size in Accelerate's terms, in bits.
uint64_t accelerateBits(const TensorEntry& tensor);
ModelSizes measureModel(const ModelFiles& model);

enum class Precision { Mixed, Full };

struct TrainingSetup {
  int processes = 1;  // N, all machines together
  int machines = 1;   // M; N must be a multiple of it
  Precision precision = Precision::Mixed;
};

struct BytesPerParameter {
  int parameters, gradients, optimizer;
};
BytesPerParameter bytesPerParameter(Precision precision);

struct StrategyEstimate {
  std::string name;  // "DDP", "DeepSpeed ZeRO-1", …, "FSDP hybrid shard"
  uint64_t bytes_per_process = 0;
};

// Throws accel::UsageError when the setup is impossible (no processes, N not a multiple of M).
std::vector<StrategyEstimate> estimateStrategies(const ModelSizes& sizes, const TrainingSetup& setup);

}  // namespace accel
