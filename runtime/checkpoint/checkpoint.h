// SPDX-License-Identifier: Apache-2.0
// save_state / load_state: every rank writes its part (named byte blobs: parameters, optimizer
// buffers, RNG, loss scaler, …) and rank 0 a manifest (world size, step, size and CRC-32 of
// every part). A save goes to a temporary directory renamed to a fresh DIR/step-N (never one
// that exists), then DIR/latest is replaced atomically: a crash at any point leaves the previous
// checkpoint loadable. The previous checkpoint is kept, older ones are removed, and so is what
// a killed save left (its temporary directory or file, a directory it never committed): by the
// next save, so a resumed run cleans up as soon as it saves; loading ignores it. Loading
// refuses another world size, a missing part or a bad checksum, naming it. Collective: every
// rank of `group` calls, in the same order. Blocking.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/comm/backend.h"

namespace accel {

struct CheckpointPart {
  int64_t step = 0;
  std::map<std::string, std::vector<uint8_t>> blobs;
};

// Returns the directory written (DIR/step-<step>, or step-<step>.<k> when that name was taken).
std::string saveCheckpoint(Backend& group, const std::string& dir, const CheckpointPart& mine);

// Loads this rank's part of DIR/latest (or of `dir` itself when it holds a manifest).
// Throws Error naming the file and what is wrong.
CheckpointPart loadCheckpoint(Backend& group, const std::string& dir);

// True when DIR has a checkpoint to resume from.
bool hasCheckpoint(const std::string& dir);

// CRC-32 (IEEE 802.3), for the manifest.
uint32_t crc32(const uint8_t* data, size_t size);

}  // namespace accel
