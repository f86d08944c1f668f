// SPDX-License-Identifier: Apache-2.0
// Where each parameter's shard lies and which parameters are gathered together.
//
// A parameter is split along dimension 0 as torch.chunk(world) splits it, FSDP2's Shard(0):
// chunk c = ceil(rows / world) rows, rank r holds rows [r*c, min((r+1)*c, rows)) (none for a
// rank past the end); a 0-dimensional parameter is one row. A unit's collectives move one flat
// buffer per rank, each of its parameters' chunks padded to c rows, in registration order.
//
// Units are chosen as Accelerate's FSDP auto-wrap policies choose them: the modules whose class
// is named (TRANSFORMER_BASED_WRAP: "Block" matches a module holder's BlockImpl, a namespace is
// ignored), else those holding at least min_params parameters not yet in a unit, deepest first
// (SIZE_BASED_WRAP), else every child of the root that holds parameters (a child with none of
// its own, a ModuleList or Sequential, stands for its children). The parameters no unit
// holds form the root unit. A named class the model does not have is an Error listing those it
// has; a parameter that two units hold (a tied weight) is an Error under stage 3, naming both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>

namespace accel {

struct ShardedParam {
  std::string name;
  at::Tensor full;         // the module's own parameter
  int64_t rows = 1;        // dimension 0 (1 for a 0-dimensional parameter)
  int64_t row_numel = 1;   // elements per row
  int64_t chunk_rows = 1;  // ceil(rows / world)
  int64_t offset = 0;      // in its unit's flat per-rank buffer, elements
  size_t unit = 0;

  int64_t firstRow(int rank) const { return std::min<int64_t>(rank * chunk_rows, rows); }
  int64_t rowsOf(int rank) const { return std::min<int64_t>(firstRow(rank) + chunk_rows, rows) - firstRow(rank); }
  std::vector<int64_t> shardShape(int rank) const;  // the shard's own shape (rowsOf(rank) rows)
};

struct ShardUnit {
  std::string name;            // the module's path ("" for the root unit)
  std::vector<size_t> params;  // indices into the layout's params
  int64_t shard_numel = 0;     // per rank, padding included
};

struct UnitRules {
  std::vector<std::string> classes;
  int64_t min_params = 0;
  bool refuse_shared = false;  // stage 3: a tensor in two units is an Error
};

struct ShardLayout {
  std::vector<ShardedParam> params;  // the module's trainable parameters, registration order
  std::vector<ShardUnit> units;      // the root unit (possibly empty) first
};

ShardLayout buildShardLayout(torch::nn::Module& module, int world, const UnitRules& rules);

// Whether a module's class name (Module::name(): "BlockImpl", "torch::nn::LinearImpl") is `wanted`.
bool classMatches(const std::string& module_class, const std::string& wanted);

}  // namespace accel
