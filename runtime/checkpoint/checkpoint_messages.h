// SPDX-License-Identifier: Apache-2.0
// What rank 0 tells the other ranks about a checkpoint directory, typed, with one codec, in the
// pattern of the store's protocol (runtime/store/tcp_store_protocol.h) and the launchers' job
// channel (lib/launch/job/job_messages.h): one enum of kinds, one struct per message, a
// protocol version. On the wire (broadcastText) a message is one JSON object: "t" names the
// kind, "v" the version, the other fields are the struct's. decode() refuses a missing, mistyped
// or unknown field and another version, naming it: the ranks of one job run one build, so a
// refusal means a corrupted exchange, never a silent default.
//
//   claim:    whether rank 0 holds the directory's lock for this job (DirectoryClaim)
//   decision: which checkpoint every rank resumes from, or none, or why not (ResumeDecision)
#pragma once

#include <string>

namespace accel {

inline constexpr int kCheckpointProtocolVersion = 1;

struct DirectoryClaim {
  enum class Outcome { Held, InUse, Failed };  // InUse: another job holds it; Failed: not taken
  Outcome outcome = Outcome::Held;
  std::string text;  // InUse: the holder; Failed: why

  std::string encode() const;
  static DirectoryClaim decode(const std::string& line);  // throws Error naming the field
};

struct ResumeDecision {
  enum class Kind { None, Error, Use };
  Kind kind = Kind::None;
  std::string dir;  // rank 0's directory: other ranks may have their own path for it
  // Use: the checkpoint's name relative to `dir` ("." when `dir` is the checkpoint) and the
  // text of its manifest. Error: the message and its hint.
  std::string name, manifest_text;
  std::string message, hint;

  std::string encode() const;
  static ResumeDecision decode(const std::string& line);  // throws Error naming the field
};

}  // namespace accel
