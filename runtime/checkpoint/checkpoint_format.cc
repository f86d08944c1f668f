// SPDX-License-Identifier: Apache-2.0
#include "runtime/checkpoint/checkpoint_format.h"

#include <charconv>
#include <cstring>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {

namespace {

constexpr char kMagic[8] = {'A', 'C', 'C', 'E', 'L', 'C', 'K', '1'};

// The whole word as an integer of type T in `base` (from_chars: no sign games, no overflow);
// base 16 reads a CRC as formatManifest writes it.
template <typename T>
std::optional<T> parseWord(const std::string& text, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw Error(fmt::format("{}: a damaged {}", path, what), "the checkpoint is corrupt; resume from an earlier one");
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
  Manifest m;
  std::istringstream in(text);
  std::string word;
  in >> word;
  if (word != "accel-checkpoint") throw Error(path + " is not an accel checkpoint manifest");
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
      if (!v) damaged(path, "'world_size' line");
      m.world = *v;
    } else if (word == "step") {
      auto v = parseWord<int64_t>(next("step"));
      if (!v) damaged(path, "'step' line");
      m.step = *v;
    } else if (word == "part") {
      const std::string rank_text = next("part");
      auto rank = parseWord<int>(rank_text);
      auto size = parseWord<uint64_t>(next("part"));
      auto crc = parseWord<uint32_t>(next("part"), 16);
      if (!rank || !size || !crc) damaged(path, fmt::format("'part' line (rank {})", rank_text));
      m.parts[*rank] = {*size, *crc};
    }  // other words are skipped, as this reader always has: a later writer may add lines
  }
  if (m.world <= 0) throw Error(path + " has no world_size");
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
    part.blobs[name] = std::vector<uint8_t>(data.begin() + static_cast<long>(at), data.begin() + static_cast<long>(at + size));
    at += size;
  }
  return part;
}

}  // namespace accel
