// SPDX-License-Identifier: Apache-2.0
#include "runtime/checkpoint/checkpoint_resume.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/checkpoint_messages.h"
#include "runtime/comm/text_exchange.h"
#include "runtime/state/runtime_settings.h"

namespace accel {

namespace {

constexpr const char* kSameFilesHint =
    "every rank must see the same checkpoint directory: a shared file system that every machine sees alike, or the "
    "same files copied to each machine";

using Decision = ResumeDecision;
using Kind = ResumeDecision::Kind;

std::string where(const std::string& dir, const std::string& name) { return name == "." ? dir : dir + "/" + name; }

// What DIR/latest names on this rank's machine, for messages.
std::string latestHere(const std::string& dir) {
  if (fileExists(dir + "/manifest")) return "it holds a checkpoint itself";
  if (!fileExists(dir + "/latest")) return "it has no latest";
  return "its latest names " + trim(readFile(dir + "/latest"));
}

// The launcher's label for this machine when several run the job, else the host name.
std::string machineName() {
  const std::string label = readRuntimeSettings().machine_name;
  return label.empty() ? hostName() : label;
}

// The newest checkpoint in DIR other than `name` (saves keep the previous one), or "".
std::string olderCheckpoint(const std::string& dir, const std::string& name) {
  std::string best;
  long long best_step = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string other = entry.path().filename().string();
    if (!startsWith(other, "step-") || other == name || !fileExists(entry.path().string() + "/manifest")) continue;
    const auto step = parseInt(other.substr(5, other.find('.') - 5));  // "step-3" or "step-3.1"
    if (step && *step > best_step) {
      best = other;
      best_step = *step;
    }
  }
  return best;
}

// Rank 0's manifest; when damaged, the hint names the older checkpoint to resume from instead.
Manifest parseChosen(const std::string& dir, const Decision& d, const std::string& path) {
  try {
    return parseManifest(d.manifest_text, path);
  } catch (const DamagedManifest& e) {
    const std::string older = d.name == "." ? "" : olderCheckpoint(dir, d.name);
    if (older.empty()) throw;
    throw Error(e.what(), fmt::format("{}; here that is {}/{}", e.hint(), dir, older));
  }
}

Decision decide(const std::string& dir, int world, OtherWorld other) {
  Decision d{Kind::Use, dir, "", "", "", ""};
  try {
    if (!hasCheckpoint(dir)) return {Kind::None, dir, "", "", "", ""};
    d.name = fileExists(dir + "/manifest") ? "." : trim(readFile(dir + "/latest"));
    const std::string path = where(dir, d.name) + "/manifest";
    if (!fileExists(path))
      throw Error(fmt::format("{} names {}, which has no manifest", dir + "/latest", where(dir, d.name)));
    d.manifest_text = readFile(path);
    const Manifest m = parseChosen(dir, d, path);
    if (m.world != world && other == OtherWorld::Refuse) {
      throw Error(fmt::format("checkpoint {} was saved by {} processes, but this run has {}, and this program's "
                              "state is not the same on every rank",
                              where(dir, d.name), m.world, world),
                  fmt::format("resume with --num_processes {}", m.world));
    }
  } catch (const Error& e) {
    return {Kind::Error, dir, "", "", e.what(), e.hint()};
  }
  return d;
}

// This rank's part of rank 0's choice, checked against rank 0's manifest: "" when it loads.
std::string examine(const std::string& dir, const Decision& d, const Manifest& m, int own_rank, CheckpointPart& part) {
  const std::string at = where(dir, d.name);
  const int rank = own_rank % m.world;  // another world: replicated state (decide() refused the rest)
  if (!fileExists(at + "/manifest") && !fileExists(at + "/" + partName(rank))) {
    return fmt::format("{} does not exist here ({})", at, latestHere(dir));
  }
  if (fileExists(at + "/manifest") && readFile(at + "/manifest") != d.manifest_text) {
    return fmt::format("{}/manifest differs from rank 0's (step {} there, step {} on rank 0)", at,
                       parseManifest(readFile(at + "/manifest"), at + "/manifest").step, m.step);
  }
  const std::string path = at + "/" + partName(rank);
  auto entry = m.parts.find(rank);
  if (entry == m.parts.end() || !fileExists(path)) return fmt::format("checkpoint part {} is missing", path);
  const std::string data = readFile(path);
  const uint32_t crc = crc32(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  if (data.size() != entry->second.size || crc != entry->second.crc) {
    return fmt::format(
        "checkpoint part {} is corrupt: {} bytes with CRC-32 {:08x}, the manifest says {} bytes with {:08x}", path,
        data.size(), crc, entry->second.size, entry->second.crc);
  }
  part = decodePart(data, path);
  part.saved_world = m.world;
  part.saved_rank = rank;
  part.saved_dir = at;
  if (part.step != m.step)
    return fmt::format("checkpoint part {} is from step {}, the manifest says {}", path, part.step, m.step);
  return "";
}

// Every rank's finding, and one Error for all when any rank has one.
void agreeOrThrow(Backend& group, const std::string& finding, const std::string& head, const std::string& hint) {
  const auto all = allGatherText(group, finding.empty() ? "" : machineName() + "\n" + finding);
  std::vector<std::string> problems;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const size_t nl = all[r].find('\n');
    problems.push_back(fmt::format("rank {} on host {}: {}", r, all[r].substr(0, nl), all[r].substr(nl + 1)));
  }
  if (!problems.empty()) throw Error(head + join(problems, "; "), hint);
}

}  // namespace

std::optional<CheckpointPart> resumeCheckpoint(Backend& group, const std::string& dir, OtherWorld other) {
  claimCheckpointDirectory(group, dir);
  const Decision d =
      Decision::decode(broadcastText(group, group.rank() == 0 ? decide(dir, group.size(), other).encode() : ""));
  if (d.kind == Kind::Error) throw Error(d.message, d.hint);
  if (d.kind == Kind::None) {
    const std::string finding =
        group.rank() != 0 && hasCheckpoint(dir) ? fmt::format("{} has a checkpoint ({})", dir, latestHere(dir)) : "";
    agreeOrThrow(group, finding, fmt::format("rank 0 found no checkpoint to resume from in {}, but ", d.dir),
                 kSameFilesHint);
    return std::nullopt;
  }
  const Manifest m = parseManifest(d.manifest_text, "rank 0's " + where(d.dir, d.name) + "/manifest");  // parsed there
  CheckpointPart part;
  std::string finding;
  try {
    finding = examine(dir, d, m, group.rank(), part);
  } catch (const Error& e) {  // a damaged file: a finding like the others
    finding = e.what();
  }
  agreeOrThrow(group, finding,
               fmt::format("the ranks cannot all resume from the checkpoint rank 0 chose ({}, step {}): ",
                           where(d.dir, d.name), m.step),
               kSameFilesHint);
  return part;
}

CheckpointPart readSavedPart(const CheckpointPart& loaded, int rank) {
  const std::string manifest_path = loaded.saved_dir + "/manifest";
  if (!fileExists(manifest_path)) {
    throw Error(
        fmt::format("{} is not on this machine: resharding reads every rank's part of the checkpoint", manifest_path),
        "save checkpoints to a directory every machine shares");
  }
  const Manifest m = parseManifest(readFile(manifest_path), manifest_path);
  const std::string path = loaded.saved_dir + "/" + partName(rank);
  auto entry = m.parts.find(rank);
  if (entry == m.parts.end() || !fileExists(path)) throw Error(fmt::format("checkpoint part {} is missing", path));
  const std::string data = readFile(path);
  if (data.size() != entry->second.size ||
      crc32(reinterpret_cast<const uint8_t*>(data.data()), data.size()) != entry->second.crc) {
    throw Error(fmt::format("checkpoint part {} is corrupt: its size or CRC-32 is not the manifest's", path));
  }
  CheckpointPart part = decodePart(data, path);
  part.saved_world = m.world;
  part.saved_rank = rank;
  part.saved_dir = loaded.saved_dir;
  return part;
}

CheckpointPart loadCheckpoint(Backend& group, const std::string& dir, OtherWorld other) {
  auto part = resumeCheckpoint(group, dir, other);
  if (!part) throw Error("no checkpoint in " + dir, "save one first, or start without --resume");
  return std::move(*part);
}

}  // namespace accel
