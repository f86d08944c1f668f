// SPDX-License-Identifier: Apache-2.0
// TCPStore wire format, shared by the client (tcp_store_client.cc) and the server
// (tcp_store_server*.cc). Integers are little-endian; a key, value or string is a uint32 length
// plus raw bytes; "keys" is a uint32 count followed by that many keys.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace accel::store_protocol {

// Handshake, client → server, fixed layout so that any version can read it:
//   magic u32 | version u32 | rank i32 (-1: anonymous) | token (u32 length + bytes)
// Reply: status u8 (kOk or a refusal) | reason (u32 length + bytes, empty on kOk).
// A refused connection is closed by the server after the reply.
inline constexpr uint32_t kMagic = 0x53434341;  // "ACCS" on the wire
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHandshakeFixedBytes = 16;

// After the handshake every request and reply is a frame: payload length u32 | payload.
// Request payload: command u8 | arguments. Reply payload: status u8 | results.
// Requests on one connection are answered one at a time, in order; a parked get/wait holds
// back the requests behind it. Anything malformed closes the connection.
enum class Command : uint8_t {
  kPing = 0,        // → (nothing)
  kSet = 1,         // key, value → (nothing)
  kGet = 2,         // key, timeout_ms i64 → value, or kTimeout; parked until the key exists
  kAdd = 3,         // key, delta i64 → new value i64
  kCheck = 4,       // keys → u8 (1: all exist)
  kWait = 5,        // keys, timeout_ms i64 → (nothing), or kTimeout + missing keys
  kDelete = 6,      // key → u8 (1: existed)
  kNumKeys = 7,     // → i64
  kCompareSet = 8,  // key, expected, desired → value now stored
  kWaitRanks = 9,   // world_size i32, timeout_ms i64 → joined i32, missing ranks (u32 count,
                    // i32 each, the first 64 only); kTimeout if any is missing at the deadline
};
inline constexpr uint8_t kLastCommand = 9;

enum class Status : uint8_t {
  kOk = 0,
  kTimeout = 1,
  kRefusedMagic = 2,
  kRefusedVersion = 3,
  kRefusedToken = 4,
};

inline constexpr uint32_t kMaxKeyBytes = 64u << 10;
inline constexpr uint32_t kMaxValueBytes = 64u << 20;
inline constexpr uint32_t kMaxKeysPerRequest = 4096;
inline constexpr uint32_t kMaxTokenBytes = 4096;
inline constexpr uint32_t kMaxReasonBytes = 4096;
inline constexpr int32_t kMaxWorldSize = 1 << 20;
// The largest payload either side accepts (compareSet: a key and two values). Checked on the
// length prefix, before any byte of the payload is buffered; it bounds a keys list as well.
inline constexpr uint32_t kMaxFrameBytes = 1 + (4 + kMaxKeyBytes) + 2 * (4 + kMaxValueBytes);

// Malformed input: the receiving side drops the connection.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Appends encoded fields to a byte buffer.
class Writer {
 public:
  std::vector<uint8_t>& bytes() { return out_; }
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  template <typename Range> void field(const Range& data) {
    u32(static_cast<uint32_t>(data.size()));
    out_.insert(out_.end(), data.begin(), data.end());
  }
  void keys(const std::vector<std::string>& keys) {
    u32(static_cast<uint32_t>(keys.size()));
    for (const auto& k : keys) field(k);
  }
  // Starts a frame: reserves the length, which finishFrame() fills in.
  void beginFrame() {
    start_ = out_.size();
    u32(0);
  }
  void finishFrame() {
    auto n = static_cast<uint32_t>(out_.size() - start_ - 4);
    for (int i = 0; i < 4; ++i) out_[start_ + i] = static_cast<uint8_t>(n >> (8 * i));
  }

 private:
  std::vector<uint8_t> out_;
  size_t start_ = 0;
};

// Decodes fields from a complete payload; every read is bounds- and limit-checked.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  uint8_t u8() {
    need(1);
    return *p_++;
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{*p_++} << (8 * i);
    return v;
  }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{*p_++} << (8 * i);
    return static_cast<int64_t>(v);
  }
  std::vector<uint8_t> bytes(uint32_t max) {
    uint32_t n = length(max);
    std::vector<uint8_t> v(p_, p_ + n);
    p_ += n;
    return v;
  }
  std::string string(uint32_t max) {
    uint32_t n = length(max);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  std::vector<std::string> keys() {
    uint32_t n = u32();
    if (n > kMaxKeysPerRequest) throw ProtocolError("too many keys in one request");
    std::vector<std::string> out;
    for (uint32_t i = 0; i < n; ++i) out.push_back(string(kMaxKeyBytes));
    return out;
  }
  void expectEnd() const {
    if (p_ != end_) throw ProtocolError("trailing bytes after a request");
  }

 private:
  void need(size_t n) const {
    if (remaining() < n) throw ProtocolError("truncated field");
  }
  uint32_t length(uint32_t max) {
    uint32_t n = u32();
    if (n > max) throw ProtocolError("field longer than the protocol allows");
    need(n);
    return n;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

// How both sides name an address in messages: "host:port", or "[v6 address]:port".
inline std::string endpoint(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace accel::store_protocol
