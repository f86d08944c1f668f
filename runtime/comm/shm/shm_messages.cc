// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/shm/shm_messages.h"

#include <charconv>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "lib/common/json_fields.h"
#include "runtime/comm/work.h"

namespace accel::comm::shm {

namespace {

using nlohmann::json;

constexpr size_t kMaxText = 64 << 10;

template <typename Read> void readMessage(const std::string& text, const char* kind, Read read) {
  const std::string where = fmt::format("shared-memory setup, the {} message: ", kind);
  try {
    const json j = parseObject(text, where);
    JsonFields f(j, where, kMaxText);
    if (j.value("t", "") != kind) throw FieldError(where + "field 't' is not \"" + kind + "\"");
    const int version = f.small("v", 0, 1 << 30);
    if (version != kShmProtocolVersion) {
      throw FieldError(fmt::format("{}protocol version {}, this rank speaks {}", where, version, kShmProtocolVersion));
    }
    read(f);
    f.done();
  } catch (const FieldError& e) {
    throw CommError(e.what(), "every rank of a job must run the same build of accel's runtime");
  }
}

// Exactly 16 hex digits (how encode() writes a nonce).
std::optional<uint64_t> parseHex64(const std::string& text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.size() != 16 || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string SegmentOffer::encode() const {
  return dump({{"t", "offer"},
               {"v", kShmProtocolVersion},
               {"created", created},
               {"pid", pid},
               {"fd", fd},
               {"nonce", fmt::format("{:016x}", nonce)},
               {"problem", problem}});
}

SegmentOffer SegmentOffer::decode(const std::string& text) {
  SegmentOffer o;
  readMessage(text, "offer", [&](JsonFields& f) {
    o.created = f.flag("created");
    o.pid = f.small("pid", 0, std::numeric_limits<int>::max());
    o.fd = f.small("fd", -1, std::numeric_limits<int>::max());
    const std::string nonce = f.text("nonce");
    const auto parsed = parseHex64(nonce);
    if (!parsed)
      throw FieldError(
          fmt::format("shared-memory setup, the offer message: field 'nonce': '{}' is not 16 "
                      "hex digits",
                      nonce));
    o.nonce = *parsed;
    o.problem = f.text("problem");
  });
  return o;
}

std::string SegmentAnswer::encode() const {
  return dump({{"t", "answer"}, {"v", kShmProtocolVersion}, {"ok", ok}, {"problem", problem}});
}

SegmentAnswer SegmentAnswer::decode(const std::string& text) {
  SegmentAnswer a;
  readMessage(text, "answer", [&](JsonFields& f) {
    a.ok = f.flag("ok");
    a.problem = f.text("problem");
  });
  return a;
}

}  // namespace accel::comm::shm
