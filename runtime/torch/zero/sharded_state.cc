// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/zero/sharded_state.h"

#include <map>

#include <fmt/format.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "lib/common/error.h"
#include "runtime/torch/archive_bytes.h"
#include "runtime/torch/optimizer_state.h"

namespace accel {

namespace {

const std::vector<uint8_t>& shardBlob(const CheckpointPart& part, const std::string& name) {
  auto it = part.blobs.find(name);
  if (it == part.blobs.end()) {
    throw Error(fmt::format("the checkpoint has no '{}': it was saved without this ZeRO stage's model", name),
                "resume with the same stage (--zero_stage / the FSDP strategy) it was saved with");
  }
  return it->second;
}

// A tensor of a shard's shape (rows first) is cut by rows; Adam's step and the like are not.
bool perRow(const at::Tensor& t, const at::Tensor& shard) {
  return t.dim() == shard.dim() && t.dim() > 0 && t.sizes().slice(1) == shard.sizes().slice(1);
}

}  // namespace

void saveShardedState(ShardedEngine& engine, size_t m, const std::vector<torch::optim::Optimizer*>& optimizers,
                      CheckpointPart& part) {
  const std::string prefix = "zero." + std::to_string(m);
  part.blobs[prefix] = archiveBytes([&](auto& a) {
    a.write("stage", c10::IValue(static_cast<int64_t>(engine.stage())));
    a.write("world", c10::IValue(static_cast<int64_t>(engine.world())));
  });
  part.blobs[prefix + ".rows"] = archiveBytes([&](auto& a) {
    for (size_t i = 0; i < engine.shards().size(); ++i) a.write("p" + std::to_string(i), engine.shards()[i]);
  });
  for (size_t o = 0; o < optimizers.size(); ++o) {
    part.blobs[prefix + ".opt." + std::to_string(o)] = archiveBytes([&](auto& a) {
      for (size_t i = 0; i < engine.shards().size(); ++i) {
        const auto* state = optimizerState(*optimizers[o], engine.shards()[i]);
        if (!state) continue;
        torch::serialize::OutputArchive sub(a.compilation_unit());
        state->serialize(sub);
        a.write(std::to_string(i), sub);
      }
    });
  }
}

namespace {

// This rank's rows [first, first + n) of parameter i from the saved parts holding them.
struct Resharder {
  const CheckpointPart& mine;
  const ShardedEngine& engine;
  int old_world;
  std::map<int, CheckpointPart> parts;

  const CheckpointPart& part(int q) {
    if (q == mine.saved_rank) return mine;
    auto it = parts.find(q);
    if (it == parts.end()) it = parts.emplace(q, readSavedPart(mine, q)).first;
    return it->second;
  }
  // The old ranks whose rows meet this rank's, with the rows [from, to) of each old shard to take.
  std::vector<std::tuple<int, int64_t, int64_t>> pieces(size_t i) const {
    const ShardedParam& p = engine.layout().params[i];
    const int64_t first = p.firstRow(engine.rank()), last = first + p.rowsOf(engine.rank());
    const int64_t c = (p.rows + old_world - 1) / old_world;
    std::vector<std::tuple<int, int64_t, int64_t>> out;
    for (int q = 0; q < old_world && c > 0; ++q) {
      const int64_t b = std::max(first, q * c), e = std::min(last, std::min((q + 1) * c, p.rows));
      if (b < e) out.emplace_back(q, b - q * c, e - q * c);
    }
    return out;
  }
};

}  // namespace

void loadShardedState(ShardedEngine& engine, size_t m, const std::vector<torch::optim::Optimizer*>& optimizers,
                      const CheckpointPart& part) {
  const std::string prefix = "zero." + std::to_string(m);
  auto meta = openArchive(shardBlob(part, prefix));
  c10::IValue stage, world;
  meta.read("stage", stage);
  meta.read("world", world);
  if (stage.toInt() != engine.stage()) {
    throw UsageError(fmt::format("the checkpoint's model {} was saved under ZeRO stage {}; this run shards it under "
                                 "stage {}",
                                 m, stage.toInt(), engine.stage()),
                     fmt::format("resume with ZeRO stage {}, or export the whole state and load that", stage.toInt()));
  }
  Resharder r{part, engine, static_cast<int>(world.toInt()), {}};
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < engine.shards().size(); ++i) {
    int64_t at = 0;
    for (const auto& [q, from, to] : r.pieces(i)) {
      auto rows = openArchive(shardBlob(r.part(q), prefix + ".rows"));
      at::Tensor saved;
      rows.read("p" + std::to_string(i), saved);
      engine.shards()[i].narrow(0, at, to - from).copy_(saved.narrow(0, from, to - from));
      at += to - from;
    }
  }
  for (size_t o = 0; o < optimizers.size(); ++o) {
    const std::string name = prefix + ".opt." + std::to_string(o);
    for (size_t i = 0; i < engine.shards().size(); ++i) {
      auto* state = optimizerState(*optimizers[o], engine.shards()[i]);
      const auto pieces = r.pieces(i);
      if (!state || pieces.empty()) continue;
      std::vector<torch::serialize::InputArchive> saved;
      for (const auto& piece : pieces) {
        auto all = openArchive(shardBlob(r.part(std::get<0>(piece)), name));
        saved.emplace_back();
        all.read(std::to_string(i), saved.back());
      }
      torch::serialize::OutputArchive rebuilt;
      for (const std::string& key : saved.front().keys()) {
        at::Tensor t;
        if (saved.front().try_read(key, t)) {
          std::vector<at::Tensor> rows;
          for (size_t k = 0; k < saved.size(); ++k) {
            at::Tensor piece;
            saved[k].read(key, piece);
            const auto& [q, from, to] = pieces[k];
            rows.push_back(perRow(piece, engine.shards()[i]) ? piece.narrow(0, from, to - from) : piece);
          }
          rebuilt.write(key, perRow(t, engine.shards()[i]) ? torch::cat(rows) : t);
        } else {
          c10::IValue v;
          saved.front().read(key, v);
          rebuilt.write(key, v);
        }
      }
      auto in = openArchive(archiveBytes(rebuilt));
      state->serialize(in);
    }
  }
  engine.afterLoad();
}

}  // namespace accel
