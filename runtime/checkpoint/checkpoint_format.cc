// SPDX-License-Identifier: Apache-2.0
#include "runtime/checkpoint/checkpoint_format.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

constexpr char kMagic[8] = {'A', 'C', 'C', 'E', 'L', 'C', 'K', '1'};

// The whole word as an integer of type T in `base` (from_chars: no sign games, no overflow);
// base 16 reads a CRC as formatManifest writes it.
template <typename T> std::optional<T> parseWord(const std::string& text, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

constexpr const char* kOlderCheckpoint =
    "resume from an older checkpoint: the previous step-N directory beside it has its own manifest (write its name "
    "into `latest`, or pass that directory)";

std::string changedHint() { return fmt::format("it was changed after accel wrote it; {}", kOlderCheckpoint); }

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw DamagedManifest(fmt::format("{}: a damaged {}", path, what), changedHint());
}

[[noreturn]] void truncated(const std::string& path, const std::string& what) {
  throw DamagedManifest(fmt::format("checkpoint manifest {} is truncated: {}", path, what),
                        fmt::format("a writer or a copy that stopped mid-way cut it short, or it was damaged since; {}",
                                    kOlderCheckpoint));
}

// A line of the file for a message: quoted, and shortened when long (a damaged file may hold anything).
std::string quoted(const std::string& line) {
  return "'" + (line.size() <= 40 ? line : line.substr(0, 40) + "...") + "'";
}

// formatManifest ends every line with a newline: text without one at the end was cut mid-line.
void checkEnding(const std::string& text, const std::string& path) {
  if (text.empty()) truncated(path, "it is empty (0 bytes)");
  if (text.back() == '\n') return;
  const size_t last = text.rfind('\n') + 1;  // 0 when there is no newline at all
  truncated(path, fmt::format("it ends after {} bytes, in the middle of line {} ({})", text.size(),
                              std::count(text.begin(), text.end(), '\n') + 1, quoted(text.substr(last))));
}

// The first line `m` lacks of those formatManifest writes (world_size, step, one part per rank,
// in that order), and whether all lines after it are missing too: a file cut short, where a
// line missing between others is damage. Empty when it lacks none.
std::pair<std::string, bool> firstMissing(const Manifest& m, bool has_world, bool has_step) {
  if (!has_world) return {"world_size line", !has_step && m.parts.empty()};
  if (!has_step) return {"step line", m.parts.empty()};
  int rank = 0;
  while (rank < m.world && m.parts.count(rank)) ++rank;  // at most parts.size() + 1 rounds
  if (rank == m.world) return {"", false};
  const auto later = m.parts.upper_bound(rank);
  const bool tail = later == m.parts.end() || later->first >= m.world;
  const std::string ranks =
      !tail || rank == m.world - 1 ? fmt::format("rank {}", rank) : fmt::format("ranks {} to {}", rank, m.world - 1);
  return {fmt::format("part line for {} (world_size {})", ranks, m.world), tail};
}

void checkComplete(const std::string& text, const Manifest& m, bool has_world, bool has_step, const std::string& path) {
  const auto [missing, tail] = firstMissing(m, has_world, has_step);
  if (missing.empty()) return;
  if (!tail)
    throw DamagedManifest(fmt::format("checkpoint manifest {} is damaged: it has no {}", path, missing), changedHint());
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  const size_t last = text.rfind('\n', text.size() - 2) + 1;  // the start of the last line
  truncated(path, fmt::format("it ends after line {} ({}) with no {}", lines,
                              quoted(text.substr(last, text.size() - 1 - last)), missing));
}

}  // namespace

std::string formatManifest(const Manifest& m) {
  std::string out = fmt::format("accel-checkpoint 1\nworld_size {}\nstep {}\n", m.world, m.step);
  for (const auto& [rank, e] : m.parts) out += fmt::format("part {} {} {:08x}\n", rank, e.size, e.crc);
  return out;
}

// Words, not lines. Each value is read as a whole word, so that "step 12abc" or an
// out-of-range number is reported as damage instead of half-read or silently ending the parse.
Manifest parseManifest(const std::string& text, const std::string& path) {
  static const std::string kHead = "accel-checkpoint 1\n";
  if (!startsWith(text, "accel-checkpoint") && !startsWith(kHead, text)) {
    throw DamagedManifest(path + " is not an accel checkpoint manifest", changedHint());
  }
  checkEnding(text, path);
  Manifest m;
  bool has_world = false, has_step = false;
  std::istringstream in(text);
  std::string word;
  in >> word;
  if (word != "accel-checkpoint") throw DamagedManifest(path + " is not an accel checkpoint manifest", changedHint());
  in >> word;
  if (word != "1") {
    throw Error(fmt::format("{} is checkpoint format version {}; this accel reads version 1", path, word),
                "resume with the accel that wrote it");
  }
  auto next = [&](const char* what) {
    std::string value;
    if (!(in >> value)) damaged(path, fmt::format("'{}' line (no value)", what));
    return value;
  };
  while (in >> word) {
    if (word == "world_size") {
      auto v = parseWord<int>(next("world_size"));
      if (!v || *v <= 0) damaged(path, "'world_size' line");
      m.world = *v;
      has_world = true;
    } else if (word == "step") {
      auto v = parseWord<int64_t>(next("step"));
      if (!v) damaged(path, "'step' line");
      m.step = *v;
      has_step = true;
    } else if (word == "part") {
      const std::string rank_text = next("part");
      auto rank = parseWord<int>(rank_text);
      auto size = parseWord<uint64_t>(next("part"));
      auto crc = parseWord<uint32_t>(next("part"), 16);
      if (!rank || !size || !crc) damaged(path, fmt::format("'part' line (rank {})", rank_text));
      m.parts[*rank] = {*size, *crc};
    }  // other words are skipped, as this reader always has: a later writer may add lines
  }
  checkComplete(text, m, has_world, has_step, path);
  return m;
}

std::string partName(int rank) { return fmt::format("rank{}.part", rank); }

std::string encodePart(const CheckpointPart& part) {
  std::string out(kMagic, sizeof kMagic);
  auto put = [&out](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  put(static_cast<uint64_t>(part.step));
  put(part.blobs.size());
  for (const auto& [name, bytes] : part.blobs) {
    put(name.size());
    out += name;
    put(bytes.size());
    out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return out;
}

CheckpointPart decodePart(const std::string& data, const std::string& path) {
  size_t at = 0;
  // Compared as "n > what is left": `at + n` would wrap for a length near 2^64.
  auto need = [&](uint64_t n) {
    if (n > data.size() - at) throw Error("checkpoint part " + path + " is truncated");
  };
  auto get = [&]() {
    need(8);
    uint64_t v;
    std::memcpy(&v, data.data() + at, 8);
    at += 8;
    return v;
  };
  need(sizeof kMagic);
  if (std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) throw Error(path + " is not an accel checkpoint part");
  at = sizeof kMagic;
  CheckpointPart part;
  part.step = static_cast<int64_t>(get());
  for (uint64_t blobs = get(); blobs > 0; --blobs) {
    uint64_t n = get();
    need(n);
    std::string name = data.substr(at, n);
    at += n;
    uint64_t size = get();
    need(size);
    part.blobs[name] =
        std::vector<uint8_t>(data.begin() + static_cast<long>(at), data.begin() + static_cast<long>(at + size));
    at += size;
  }
  return part;
}

}  // namespace accel
