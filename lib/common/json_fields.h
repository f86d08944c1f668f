// SPDX-License-Identifier: Apache-2.0
// Reading one message of a typed protocol (a JSON object whose fields are a struct's): each
// field once, checked for its type and range; a missing field, a wrong one, or one left over
// that the reader never asked for (unknown to this version) throws FieldError naming it. The
// job channel (lib/launch/job/job_messages.h) and the runtime's messages between ranks
// (runtime/comm/shm/shm_messages.h, runtime/checkpoint/checkpoint_messages.h) read with it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace accel {

class FieldError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JsonFields {
 public:
  // `where` prefixes every error ("failure: "); strings longer than `max_text` are refused.
  JsonFields(const nlohmann::json& object, std::string where, size_t max_text);

  long long integer(const char* key, long long lo, long long hi);
  int small(const char* key, long long lo, long long hi);  // within int too
  double seconds(const char* key);                         // finite, >= 0
  bool flag(const char* key);
  std::string text(const char* key);
  std::string text(const char* key, size_t max);  // a longer bound than the object's strings have
  // A list of at most `max_lines` strings of at most `max_line` bytes each.
  std::vector<std::string> lines(const char* key, size_t max_lines, size_t max_line);
  // A list of at most `max_count` integers, each in [lo, hi].
  std::vector<long long> integers(const char* key, size_t max_count, long long lo, long long hi);
  const nlohmann::json& object(const char* key, bool nullable);
  // One of `names` (the enumerators' spellings, in order): its index.
  size_t choice(const char* key, const std::vector<const char*>& names);
  // Every field was read ("t", the message's kind, is the caller's): one more is unknown.
  void done() const;

 private:
  const nlohmann::json& need(const char* key);
  [[noreturn]] void bad(const char* key, const std::string& why) const;

  const nlohmann::json& j_;
  std::string where_;
  size_t max_text_;
  nlohmann::json read_ = nlohmann::json::object();
};

// The object a line holds, or FieldError ("not a JSON object", the parser's complaint).
nlohmann::json parseObject(const std::string& text, const std::string& where);

}  // namespace accel
