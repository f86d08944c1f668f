// SPDX-License-Identifier: Apache-2.0
#include "tests/runtime/exchange_checks.h"

#include <functional>
#include <string>
#include <utility>

namespace accel::test {

namespace {

// What rank `from` sends rank `to` at element i of that part: 1..61, exact in every dtype and
// different for neighbouring chunks, senders and receivers.
size_t sent(int from, int to, size_t i) {
  return (static_cast<size_t>(from) * 17 + static_cast<size_t>(to) * 5 + i) % 61 + 1;
}

// all_to_all_v's matrix: some pairs exchange nothing, the others n plus a little.
size_t pairCount(int from, int to, size_t n) {
  return (from + 2 * to) % 3 == 0 ? 0 : n + static_cast<size_t>(from + to);
}

// A rank's input: its parts for ranks 0, 1, … one after another; or what it should receive.
void parts(std::vector<uint8_t>& buf, DataType t, int world, int rank, bool sending,
           const std::function<size_t(int, int)>& count) {
  std::vector<uint8_t> part;
  buf.clear();
  for (int q = 0; q < world; ++q) {
    const int from = sending ? rank : q, to = sending ? q : rank;
    fillWith(part, t, count(from, to), [&](size_t i) { return sent(from, to, i); });
    buf.insert(buf.end(), part.begin(), part.end());
  }
}

}  // namespace

void checkAllToAll(Backend& b, int rank, int world, const Placement& at, Mismatches& bad) {
  std::vector<uint8_t> in, out, want;
  for (auto t : kTypes)
    for (auto n : testCounts()) {
      const auto equal = [&](int, int) { return n; };
      parts(in, t, world, rank, true, equal);
      out.assign(in.size(), 0);
      through(at, in, out, t, [&](Tensor i, Tensor o) { return b.allToAll(i, o); });
      parts(want, t, world, rank, false, equal);
      if (out != want) bad.add(label("all_to_all", t, n, world, rank));

      const auto unequal = [&](int from, int to) { return pairCount(from, to, n); };
      std::vector<size_t> send_counts, recv_counts;
      for (int q = 0; q < world; ++q) {
        send_counts.push_back(pairCount(rank, q, n));
        recv_counts.push_back(pairCount(q, rank, n));
      }
      parts(in, t, world, rank, true, unequal);
      parts(want, t, world, rank, false, unequal);
      out.assign(want.size(), 0);
      through(at, in, out, t, [&](Tensor i, Tensor o) { return b.allToAllV(i, o, send_counts, recv_counts); });
      if (out != want) bad.add(label("all_to_all_v", t, n, world, rank));
    }
}

void checkMisuse(Backend& b, int rank, int world, Mismatches& bad) {
  const size_t w = static_cast<size_t>(world);
  std::vector<float> one(1), whole(w), odd(w + 1), wrong(w + 2);
  Tensor elsewhere = cpuTensor(whole.data(), w);
  elsewhere.device = b.memory().device == DeviceType::CPU ? DeviceType::CUDA : DeviceType::CPU;
  const Tensor x = cpuTensor(one.data(), 1), all = cpuTensor(whole.data(), w);
  const std::vector<size_t> ones(w, 1), short_list(w - 1, 1);
  std::vector<size_t> self_differs(w, 1);
  self_differs[static_cast<size_t>(rank)] = 0;
  const std::vector<std::pair<std::string, std::function<WorkPtr()>>> cases = {
      {"root " + std::to_string(world) + " is not a rank of this group", [&] { return b.broadcast(x, world); }},
      {"root -1 is not a rank of this group", [&] { return b.gather(x, all, -1); }},
      {"root " + std::to_string(world) + " is not a rank of this group", [&] { return b.scatter(all, x, world); }},
      {"work on", [&] { return b.allGatherV(x, elsewhere, ones); }},
      {"work on", [&] { return b.allToAll(elsewhere, all); }},
      {"output holds", [&] { return b.allGather(x, cpuTensor(odd.data(), odd.size())); }},
      {"a multiple of the group's",
       [&] { return b.allToAll(cpuTensor(odd.data(), w + 1), cpuTensor(odd.data(), w + 1)); }},
      {"send counts and", [&] { return b.allToAllV(all, all, short_list, ones); }},
      {"add up to", [&] { return b.allToAllV(cpuTensor(wrong.data(), w + 2), all, ones, ones); }},
      {"sends itself", [&] { return b.allToAllV(cpuTensor(whole.data(), w - 1), all, self_differs, ones); }},
  };
  for (const auto& [expected, call] : cases) {
    try {
      call();
      bad.add("rank " + std::to_string(rank) + ": no error, expected one with '" + expected + "'");
    } catch (const CommError& e) {
      if (std::string(e.what()).find(expected) == std::string::npos)
        bad.add("rank " + std::to_string(rank) + ": '" + e.what() + "', expected '" + expected + "'");
    }
  }
  b.barrier()->wait();
}

}  // namespace accel::test
