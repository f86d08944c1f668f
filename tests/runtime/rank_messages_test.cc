// SPDX-License-Identifier: Apache-2.0
// The runtime's typed messages between ranks: the checkpoint directory's claim and the resume
// decision (runtime/checkpoint/checkpoint_messages.h), and the shared-memory setup
// (runtime/comm/shm/shm_messages.h). Each round-trips, and anything else is refused, naming the field.
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "runtime/checkpoint/checkpoint_messages.h"
#include "runtime/comm/shm/shm_messages.h"
#include "runtime/comm/work.h"

using namespace accel;
using accel::comm::shm::SegmentAnswer;
using accel::comm::shm::SegmentOffer;

namespace {

// `line` with field `key`'s JSON text replaced by `value` (or removed when value is empty).
std::string with(std::string line, const std::string& key, const std::string& value) {
  const std::string at = "\"" + key + "\":";
  const size_t from = line.find(at);
  REQUIRE(from != std::string::npos);
  size_t end = from + at.size();
  int depth = 0;
  bool quoted = false;
  for (; end < line.size(); ++end) {
    const char c = line[end];
    if (c == '"' && line[end - 1] != '\\') quoted = !quoted;
    if (quoted) continue;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) break;
  }
  if (value.empty()) {
    const size_t cut_from = line[from - 1] == ',' ? from - 1 : from;
    const size_t cut_to = line[from - 1] == ',' ? end : end + 1;
    return line.erase(cut_from, cut_to - cut_from);
  }
  return line.replace(from + at.size(), end - from - at.size(), value);
}

template <typename Decode> void refused(const std::string& line, Decode decode, const std::string& says) {
  INFO(line);
  CHECK_THROWS_WITH(decode(line), Catch::Contains(says));
}

}  // namespace

TEST_CASE("checkpoint messages: the claim and the decision round-trip", "[unit][checkpoint]") {
  const DirectoryClaim claim{DirectoryClaim::Outcome::InUse, "job 7 (pid 12 on gpu07)"};
  const DirectoryClaim c = DirectoryClaim::decode(claim.encode());
  CHECK(c.outcome == DirectoryClaim::Outcome::InUse);
  CHECK(c.text == claim.text);

  const ResumeDecision d{ResumeDecision::Kind::Use, "/ckpt", "step-9", "accel-checkpoint 1\nstep 9\n", "", ""};
  const ResumeDecision e = ResumeDecision::decode(d.encode());
  CHECK(e.kind == ResumeDecision::Kind::Use);
  CHECK(e.dir == "/ckpt");
  CHECK(e.name == "step-9");
  CHECK(e.manifest_text == d.manifest_text);
  const ResumeDecision error{ResumeDecision::Kind::Error, "/ckpt", "", "", "saved by 4", "resume with 4"};
  CHECK(ResumeDecision::decode(error.encode()).hint == "resume with 4");
}

TEST_CASE("checkpoint messages: a missing, unknown or mistyped field, or another version, is refused",
          "[unit][checkpoint]") {
  const std::string line = ResumeDecision{ResumeDecision::Kind::None, "/d", "", "", "", ""}.encode();
  auto decode = [](const std::string& l) { return ResumeDecision::decode(l); };
  refused(with(line, "hint", ""), decode, "field 'hint' is missing");
  refused(with(line, "kind", "\"maybe\""), decode, "field 'kind': \"maybe\" is not one of none, error, use");
  refused(with(line, "dir", "3"), decode, "field 'dir': number is not a string");
  refused(with(line, "v", "2"), decode, "protocol version 2, this rank speaks 1");
  refused(with(line, "t", "\"claim\""), decode, "field 't' is not \"decision\"");
  refused(line.substr(0, line.size() - 1) + ",\"extra\":1}", decode, "unknown field 'extra'");
  refused("use\n/d\nstep-9\nmanifest", decode, "not a JSON object");
  const std::string claim = DirectoryClaim{}.encode();
  refused(
      with(claim, "outcome", "\"L\""), [](const std::string& l) { return DirectoryClaim::decode(l); },
      "field 'outcome'");
}

TEST_CASE("shared-memory setup messages round-trip and refuse anything else", "[unit][comm]") {
  const SegmentOffer offer{true, 4242, 17, 0xfedcba9876543210ull, ""};
  const SegmentOffer o = SegmentOffer::decode(offer.encode());
  CHECK(o.created);
  CHECK(o.pid == 4242);
  CHECK(o.fd == 17);
  CHECK(o.nonce == 0xfedcba9876543210ull);
  const SegmentAnswer a = SegmentAnswer::decode(SegmentAnswer{false, "mmap: no memory"}.encode());
  CHECK_FALSE(a.ok);
  CHECK(a.problem == "mmap: no memory");

  auto decode = [](const std::string& l) { return SegmentOffer::decode(l); };
  const std::string line = offer.encode();
  refused(with(line, "nonce", "\"12\""), decode, "field 'nonce': '12' is not 16 hex digits");
  refused(with(line, "pid", "-1"), decode, "field 'pid'");
  refused(with(line, "created", ""), decode, "field 'created' is missing");
  refused("4242 17 123", decode, "not a JSON object");
  refused(SegmentAnswer{}.encode(), decode, "field 't' is not \"offer\"");
}
