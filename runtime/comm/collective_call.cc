// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/collective_call.h"

#include <climits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lib/common/call_names.h"
#include "lib/common/strings.h"

namespace accel {

const char* callKindName(CallKind k) { return calls::kindName(static_cast<unsigned>(k)); }

namespace {

// splitmix64's finaliser: every input bit moves about half the output bits.
uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

CollectiveCall CollectiveCall::reduction(CallKind kind, const Tensor& t, ReduceOp op) {
  CollectiveCall c = of(kind, t.dtype, t.count);
  c.op = op;
  return c;
}

CollectiveCall CollectiveCall::rooted(CallKind kind, const Tensor& t, int root) {
  CollectiveCall c = of(kind, t.dtype, t.count);
  c.root = root;
  return c;
}

CollectiveCall CollectiveCall::of(CallKind kind, DataType dtype, uint64_t count) {
  CollectiveCall c;
  c.kind = kind;
  c.dtype = dtype;
  c.count = count;
  return c;
}

bool CollectiveCall::exchanges(int size) const {
  return size > 1 && (count > 0 || kind == CallKind::Barrier || kind == CallKind::AllToAllV);
}

uint64_t CollectiveCall::fingerprint() const {
  uint64_t h = mix(0, seq);
  h = mix(h, static_cast<uint64_t>(kind) | static_cast<uint64_t>(dtype) << 8 | static_cast<uint64_t>(op) << 16);
  h = mix(h, static_cast<uint64_t>(static_cast<int64_t>(root)));
  return mix(h, count);
}

std::string CollectiveCall::describe() const {
  return calls::describeCall(static_cast<unsigned>(kind), static_cast<unsigned>(dtype), count,
                             static_cast<unsigned>(op), root);
}

std::string CollectiveCall::numbered() const { return fmt::format("#{} {}", shown ? shown : seq, describe()); }

namespace {
thread_local uint64_t tl_outer = 0;
}  // namespace

StepsOf::StepsOf(uint64_t outer) : previous_(tl_outer) { tl_outer = outer; }
StepsOf::~StepsOf() { tl_outer = previous_; }
uint64_t StepsOf::current() { return tl_outer; }

std::array<int64_t, CollectiveCall::kWords> CollectiveCall::words() const {
  return {static_cast<int64_t>(seq),
          static_cast<int64_t>(kind),
          static_cast<int64_t>(dtype),
          static_cast<int64_t>(op),
          root,
          static_cast<int64_t>(count),
          static_cast<int64_t>(shown)};
}

std::optional<CollectiveCall> CollectiveCall::fromWords(const int64_t* w) {
  auto within = [](int64_t v, auto last) { return v >= 0 && v <= static_cast<int64_t>(last); };
  if (w[0] < 0 || !within(w[1], CallKind::Last) || !within(w[2], DataType::Last) || !within(w[3], ReduceOp::Last) ||
      w[4] < -1 || w[4] > INT_MAX || w[5] < 0 || w[6] < 0) {
    return std::nullopt;
  }
  CollectiveCall c = of(static_cast<CallKind>(w[1]), static_cast<DataType>(w[2]), static_cast<uint64_t>(w[5]));
  c.seq = static_cast<uint64_t>(w[0]);
  c.op = static_cast<ReduceOp>(w[3]);
  c.root = static_cast<int>(w[4]);
  c.shown = static_cast<uint64_t>(w[6]);
  return c;
}

std::string CollectiveCall::encode() const { return fmt::format("{}", fmt::join(words(), " ")); }

std::optional<CollectiveCall> CollectiveCall::decode(const std::string& text) {
  const auto parts = split(trim(text), ' ');
  if (parts.size() != kWords) return std::nullopt;
  std::array<int64_t, kWords> w{};
  for (size_t i = 0; i < kWords; ++i) {
    auto n = parseInt(parts[i]);
    if (!n) return std::nullopt;
    w[i] = *n;
  }
  return fromWords(w.data());
}

std::string mismatchText(const std::vector<std::optional<CollectiveCall>>& calls, const std::vector<int>& names) {
  // Ranks that made the same call are listed together: "ranks 0,2 called …; rank 1 called …".
  std::map<std::string, std::vector<std::string>> by_call;
  std::vector<std::string> order;
  for (size_t r = 0; r < calls.size(); ++r) {
    const std::string what = calls[r] ? "called " + calls[r]->numbered() : "was not seen at that place of the sequence";
    if (!by_call.count(what)) order.push_back(what);
    by_call[what].push_back(std::to_string(names.empty() ? static_cast<int>(r) : names[r]));
  }
  std::vector<std::string> parts;
  for (const auto& what : order) {
    const auto& ranks = by_call[what];
    parts.push_back(fmt::format("rank{} {} {}", ranks.size() > 1 ? "s" : "", join(ranks, ","), what));
  }
  return "ranks called different collectives: " + join(parts, "; ") +
         " (every rank must issue the same collectives in the same order, with the same dtype, element count and root)";
}

}  // namespace accel
