// SPDX-License-Identifier: Apache-2.0
#include "runtime/checkpoint/checkpoint.h"

#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/checkpoint_messages.h"
#include "runtime/checkpoint/directory_lock.h"
#include "runtime/comm/collective_now.h"
#include "runtime/comm/text_exchange.h"

namespace accel {

namespace fs = std::filesystem;

namespace {

// A directory name no earlier save used: the one `latest` names is never touched.
std::string freshName(const std::string& dir, int64_t step) {
  std::string name = fmt::format("step-{}", step);
  for (int k = 1; fs::exists(dir + "/" + name); ++k) name = fmt::format("step-{}.{}", step, k);
  return name;
}

// Keeps the new checkpoint and the one before it; removes older ones and what killed saves
// left: their .step-N.tmp directories, step-N directories renamed but never committed, and the
// temporary file of an interrupted `latest` update (writeFileAtomic's ".latest.XXXXXX": a kill
// between its mkstemp and its rename leaves it, and nothing else would ever remove it). Runs on
// rank 0 right after its own `latest` update, so no such temporary file is still being written.
void prune(const std::string& dir, const std::string& keep, const std::string& previous) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (((startsWith(name, "step-") || startsWith(name, ".step-")) && name != keep && name != previous) ||
        startsWith(name, ".latest.")) {
      fs::remove_all(entry.path(), ec);
    }
  }
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void claimCheckpointDirectory(Backend& group, const std::string& dir) {
  DirectoryClaim claim;
  if (group.rank() == 0) {
    try {
      const std::string holder = lockCheckpointDirectory(dir);
      if (!holder.empty()) claim = {DirectoryClaim::Outcome::InUse, holder};
    } catch (const std::exception& e) {
      claim = {DirectoryClaim::Outcome::Failed, e.what()};
    }
  }
  claim = DirectoryClaim::decode(broadcastText(group, group.rank() == 0 ? claim.encode() : ""));
  if (claim.outcome == DirectoryClaim::Outcome::Held) return;
  throw Error(claim.text, claim.outcome == DirectoryClaim::Outcome::InUse ? kDirectoryInUseHint : "");
}

std::string saveCheckpoint(Backend& group, const std::string& dir, const CheckpointPart& mine) {
  claimCheckpointDirectory(group, dir);
  const int rank = group.rank(), world = group.size();
  const std::string tmp_dir = fmt::format("{}/.step-{}.tmp", dir, mine.step);
  std::error_code ec;
  if (rank == 0) {
    fs::create_directories(dir, ec);
    fs::remove_all(tmp_dir, ec);  // a leftover of a crashed save
    fs::create_directories(tmp_dir, ec);
    if (ec) throw Error("cannot create " + tmp_dir + ": " + ec.message());
  }
  group.barrier()->wait();
  const std::string bytes = encodePart(mine);
  writeFileAtomic(tmp_dir + "/" + partName(rank), bytes);
  // Rank 0 learns every part's size and checksum.
  std::vector<uint64_t> info = {bytes.size(), crc32(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())};
  std::vector<uint64_t> all(2 * static_cast<size_t>(world));
  group.allGather(Tensor{info.data(), 2, DataType::I64}, Tensor{all.data(), all.size(), DataType::I64})->wait();
  if (rank == 0) {
    Manifest m{world, mine.step, {}};
    for (int r = 0; r < world; ++r) m.parts[r] = {all[2 * r], static_cast<uint32_t>(all[2 * r + 1])};
    writeFileAtomic(tmp_dir + "/manifest", formatManifest(m));
    const std::string previous = fileExists(dir + "/latest") ? trim(readFile(dir + "/latest")) : "";
    const std::string name = freshName(dir, mine.step);
    fs::rename(tmp_dir, dir + "/" + name, ec);
    if (ec) throw Error("cannot rename " + tmp_dir + " to " + dir + "/" + name + ": " + ec.message());
    writeFileAtomic(dir + "/latest", name + "\n");  // the commit point
    prune(dir, name, previous);
  }
  group.barrier()->wait();
  noteCheckpointSaved(mine.step);  // committed on every rank: progress the launcher can count
  return dir + "/" + trim(readFile(dir + "/latest"));
}

bool hasCheckpoint(const std::string& dir) { return fileExists(dir + "/latest") || fileExists(dir + "/manifest"); }

}  // namespace accel
