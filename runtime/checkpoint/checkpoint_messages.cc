// SPDX-License-Identifier: Apache-2.0
#include "runtime/checkpoint/checkpoint_messages.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/json_fields.h"

namespace accel {

namespace {

using nlohmann::json;

// The longest text a field may hold: a manifest lists every rank's part (about 60 bytes each).
constexpr size_t kMaxText = 64 << 20;

const std::vector<const char*> kOutcomes = {"held", "in_use", "failed"};
const std::vector<const char*> kKinds = {"none", "error", "use"};

// Reads `line` as a message of kind `kind`, checking the version; `read` takes the fields.
template <typename Read> void readMessage(const std::string& line, const char* kind, Read read) {
  const std::string where = fmt::format("rank 0's {} message: ", kind);
  try {
    const json j = parseObject(line, where);
    JsonFields f(j, where, kMaxText);
    if (j.value("t", "") != kind) throw FieldError(where + "field 't' is not \"" + kind + "\"");
    const int version = f.small("v", 0, 1 << 30);
    if (version != kCheckpointProtocolVersion) {
      throw FieldError(
          fmt::format("{}protocol version {}, this rank speaks {}", where, version, kCheckpointProtocolVersion));
    }
    read(f);
    f.done();
  } catch (const FieldError& e) {
    throw Error(e.what(), "every rank of a job must run the same build of accel's runtime");
  }
}

}  // namespace

std::string DirectoryClaim::encode() const {
  return json{{"t", "claim"},
              {"v", kCheckpointProtocolVersion},
              {"outcome", kOutcomes[static_cast<size_t>(outcome)]},
              {"text", text}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

DirectoryClaim DirectoryClaim::decode(const std::string& line) {
  DirectoryClaim c;
  readMessage(line, "claim", [&](JsonFields& f) {
    c.outcome = static_cast<Outcome>(f.choice("outcome", kOutcomes));
    c.text = f.text("text");
  });
  return c;
}

std::string ResumeDecision::encode() const {
  return json{{"t", "decision"},
              {"v", kCheckpointProtocolVersion},
              {"kind", kKinds[static_cast<size_t>(kind)]},
              {"dir", dir},
              {"name", name},
              {"manifest", manifest_text},
              {"message", message},
              {"hint", hint}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

ResumeDecision ResumeDecision::decode(const std::string& line) {
  ResumeDecision d;
  readMessage(line, "decision", [&](JsonFields& f) {
    d.kind = static_cast<Kind>(f.choice("kind", kKinds));
    d.dir = f.text("dir");
    d.name = f.text("name");
    d.manifest_text = f.text("manifest");
    d.message = f.text("message");
    d.hint = f.text("hint");
  });
  return d;
}

}  // namespace accel
