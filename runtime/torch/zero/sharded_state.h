// SPDX-License-Identifier: Apache-2.0
// A sharded model in TorchAccelerator's checkpoints (saveState/loadState): each rank saves its
// rows of every parameter and of every optimizer's state of them, never the whole model.
// Blobs of model m: "zero.m" (stage and world), "zero.m.rows" (this rank's rows, the buffers),
// "zero.m.opt.o" (optimizer o's state of each of this rank's shards, as its ParamState writes it).
//
// Loading at the same world size takes the rows back. At another world size each rank builds its
// new rows from the saved parts that hold them (readSavedPart: every part must be readable where
// the rank runs); an optimizer state's tensor of the shard's shape is cut and joined by rows like
// the parameter, anything else (Adam's step) is taken from the first part. A checkpoint of another
// ZeRO stage, or of a model that was not sharded, is an Error naming both.
#pragma once

#include <string>
#include <vector>

#include <torch/optim/optimizer.h>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/torch/zero/sharded_engine.h"

namespace accel {

void saveShardedState(ShardedEngine& engine, size_t model, const std::vector<torch::optim::Optimizer*>& optimizers,
                      CheckpointPart& part);
// After the optimizers' own blobs were loaded (their hyperparameters, and at the same world size
// their state). Not collective, except stages 1-2 gathering the loaded rows into the parameters.
void loadShardedState(ShardedEngine& engine, size_t model, const std::vector<torch::optim::Optimizer*>& optimizers,
                      const CheckpointPart& part);

}  // namespace accel
