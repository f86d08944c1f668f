// SPDX-License-Identifier: Apache-2.0
// The pure parts of the runtime's communication layer: a collective call's description and its
// encodings (runtime/comm/collective_call.h), where a group's ranks are (host_identity.h), and
// which transport the table gives a group (cpu_transport.h).
#include <catch2/catch.hpp>

#include <climits>

#include "runtime/comm/collective_call.h"
#include "runtime/comm/cpu_transport.h"
#include "runtime/comm/host_identity.h"

using namespace accel;

namespace {

CollectiveCall sample() {
  CollectiveCall c =
      CollectiveCall::reduction(CallKind::ReduceScatter, cpuTensor(static_cast<float*>(nullptr), 12), ReduceOp::Max);
  c.seq = 41;
  c.shown = 7;
  return c;
}

}  // namespace

TEST_CASE("collective call: every enumerator up to Last has a name, and the next none", "[unit][comm]") {
  for (int k = 0; k <= static_cast<int>(CallKind::Last); ++k) CHECK(std::string(callKindName(CallKind(k))) != "?");
  CHECK(std::string(callKindName(CallKind(static_cast<int>(CallKind::Last) + 1))) == "?");
  for (int t = 0; t <= static_cast<int>(DataType::Last); ++t) CHECK(std::string(dtypeName(DataType(t))) != "?");
  CHECK(std::string(dtypeName(DataType(static_cast<int>(DataType::Last) + 1))) == "?");
  for (int o = 0; o <= static_cast<int>(ReduceOp::Last); ++o) CHECK(std::string(reduceOpName(ReduceOp(o))) != "?");
  CHECK(std::string(reduceOpName(ReduceOp(static_cast<int>(ReduceOp::Last) + 1))) == "?");
}

TEST_CASE("collective call: descriptions", "[unit][comm]") {
  const Tensor t = cpuTensor(static_cast<double*>(nullptr), 1000);
  CHECK(CollectiveCall::reduction(CallKind::AllReduce, t, ReduceOp::Sum).describe() == "all_reduce (f64 x 1000) sum");
  CHECK(CollectiveCall::rooted(CallKind::Broadcast, t, 2).describe() == "broadcast (f64 x 1000) from rank 2");
  CHECK(CollectiveCall::rooted(CallKind::Gather, t, 0).describe() == "gather (f64 x 1000) to rank 0");
  CHECK(CollectiveCall::of(CallKind::AllToAll, DataType::BF16, 8).describe() == "all_to_all (bf16 x 8)");
  CHECK(CollectiveCall::of(CallKind::AllToAllV, DataType::I32, 0).describe() == "all_to_all_v (i32)");
  CHECK(CollectiveCall{}.describe() == "barrier");
  CHECK(sample().numbered() == "#7 reduce_scatter (f32 x 12) max");  // the larger group's number
}

TEST_CASE("collective call: which calls meet", "[unit][comm]") {
  CHECK_FALSE(CollectiveCall::of(CallKind::AllGather, DataType::F32, 5).exchanges(1));
  CHECK_FALSE(CollectiveCall::of(CallKind::AllGather, DataType::F32, 0).exchanges(4));
  CHECK(CollectiveCall::of(CallKind::AllGather, DataType::F32, 5).exchanges(2));
  CHECK(CollectiveCall{}.exchanges(2));                                           // a barrier always meets
  CHECK(CollectiveCall::of(CallKind::AllToAllV, DataType::F32, 0).exchanges(2));  // counts differ by rank
  CHECK_FALSE(CollectiveCall::of(CallKind::AllToAllV, DataType::F32, 0).exchanges(1));
}

TEST_CASE("collective call: words and text round-trip, and anything else is refused", "[unit][comm]") {
  const CollectiveCall c = sample();
  const auto back = CollectiveCall::decode(c.encode());
  REQUIRE(back);
  CHECK(back->fingerprint() == c.fingerprint());
  CHECK(back->numbered() == c.numbered());
  CHECK(back->shown == 7);
  const auto words = c.words();
  REQUIRE(CollectiveCall::fromWords(words.data()));

  auto with = [&](size_t i, int64_t v) {
    auto w = words;
    w[i] = v;
    return CollectiveCall::fromWords(w.data());
  };
  CHECK_FALSE(with(0, -1));                                        // seq
  CHECK_FALSE(with(1, static_cast<int64_t>(CallKind::Last) + 1));  // kind
  CHECK(with(1, static_cast<int64_t>(CallKind::AllToAllV)));       // a kind after the old Barrier
  CHECK_FALSE(with(2, static_cast<int64_t>(DataType::Last) + 1));  // dtype
  CHECK_FALSE(with(3, static_cast<int64_t>(ReduceOp::Last) + 1));  // op
  CHECK_FALSE(with(4, -2));                                        // root
  CHECK_FALSE(with(4, static_cast<int64_t>(INT_MAX) + 1));
  CHECK_FALSE(with(5, -1));  // count
  CHECK_FALSE(with(6, -1));  // shown
  CHECK_FALSE(CollectiveCall::decode(""));
  CHECK_FALSE(CollectiveCall::decode("1 2 3"));
  CHECK_FALSE(CollectiveCall::decode("1 2 3 4 5 6 x"));
  CHECK_FALSE(CollectiveCall::decode("1 0 0 0 -1 5 0 9"));
}

TEST_CASE("collective call: the fingerprint covers every field", "[unit][comm]") {
  const CollectiveCall c = sample();
  CollectiveCall d = c;
  d.seq += 1;
  CHECK(d.fingerprint() != c.fingerprint());
  d = c;
  d.count += 1;
  CHECK(d.fingerprint() != c.fingerprint());
  d = c;
  d.op = ReduceOp::Min;
  CHECK(d.fingerprint() != c.fingerprint());
  d = c;
  d.root = 1;
  CHECK(d.fingerprint() != c.fingerprint());
  d = c;
  d.kind = CallKind::AllToAll;
  CHECK(d.fingerprint() != c.fingerprint());
}

TEST_CASE("mismatch text: ranks with the same call are listed together", "[unit][comm]") {
  CollectiveCall a = CollectiveCall::of(CallKind::AllToAll, DataType::F32, 9);
  CollectiveCall b = CollectiveCall::of(CallKind::AllToAllV, DataType::F32, 0);
  b.seq = a.seq = 4;
  const std::string text = mismatchText({a, b, a, std::nullopt}, {10, 11, 12, 13});
  CHECK(text.find("ranks 10,12 called #4 all_to_all (f32 x 9); rank 11 called #4 all_to_all_v (f32); rank 13 was "
                  "not seen at that place of the sequence") != std::string::npos);
}

TEST_CASE("host layout: hosts in the order of their lowest rank, ranks ascending", "[unit][comm]") {
  const HostLayout l = layoutOf({"B", "A", "B", "C", "A"});
  CHECK(l.host_of == std::vector<int>{0, 1, 0, 2, 1});
  CHECK(l.hosts == std::vector<std::vector<int>>{{0, 2}, {1, 4}, {3}});
  CHECK(l.localIndex(4) == 1);
  CHECK(l.localIndex(3) == 0);
  CHECK_FALSE(l.spreadOut());
  CHECK(l.describe() == "3 hosts: ranks 0,2 | 1,4 | 3");
  CHECK(layoutOf({"x", "y"}).spreadOut());
  CHECK(layoutOf({"x"}).describe() == "1 host: ranks 0");
}

TEST_CASE("cpu transports: a group gets the table's first entry that can serve it", "[unit][comm]") {
  // The transport's name for a group of `size` ranks on the hosts `ids` (none: never exchanged).
  auto choice = [](int size, bool shm, const std::vector<std::string>& ids) {
    GroupFacts group{0, size, shm, std::nullopt};
    if (!ids.empty()) group.layout = layoutOf(ids);
    return std::string(chooseCpuTransport(group).name);
  };
  CHECK(choice(1, true, {}) == "Gloo");
  CHECK(choice(4, false, {}) == "Gloo");
  CHECK(choice(3, true, {"A", "B", "C"}) == "Gloo");
  CHECK(choice(3, true, {"A", "A", "A"}) == "shared memory");
  CHECK(choice(3, true, {"A", "B", "A"}) == "shared memory + Gloo");
}
