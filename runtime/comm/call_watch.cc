// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/call_watch.h"

#include <thread>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

namespace {

constexpr const char* kVerdict = "verdict";
// How long the finder waits for the other waiting ranks' calls, to list them all.
constexpr auto kGathering = std::chrono::seconds(2);

std::string callKey(int rank) { return fmt::format("call/{}", rank); }

}  // namespace

CallWatch::CallWatch(Store& store, int rank, int size, std::vector<int> names)
    : store_(PrefixStore::lasting("calls", store)), rank_(rank), size_(size), names_(std::move(names)) {}

std::string CallWatch::probe(const CollectiveCall& mine) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::string known = knownVerdict(); !known.empty()) return known;
    const std::string at = fmt::format("at/{}", mine.seq),
                      same = fmt::format("at/{}/{:016x}", mine.seq, mine.fingerprint());
    if (counted_seq_ != mine.seq) {  // first look at this call: count in (same call first, then all)
      counted_seq_ = mine.seq;
      store_->set(callKey(rank_), toBytes(mine.encode()));
      store_->add(same, 1);
      store_->add(at, 1);
    }
    const int64_t all = store_->add(at, 0);  // read before `same`: see the header
    if (all > store_->add(same, 0)) return compare(mine);
    if (store_->check({kVerdict})) setVerdict(toString(store_->get(kVerdict)));
    return knownVerdict();
  } catch (const std::exception&) {
    return "";
  }
}

// Called with mutex_ held, once counts show another call at mine.seq. The others that wait
// there publish their calls at their next look (every half second), so a rank not yet seen at
// mine.seq gets kGathering to appear; one still elsewhere then is listed as not seen there (a
// call it published earlier is an older operation's).
std::string CallWatch::compare(const CollectiveCall& mine) {
  std::vector<std::optional<CollectiveCall>> calls(static_cast<size_t>(size_));
  calls[static_cast<size_t>(rank_)] = mine;
  const auto deadline = std::chrono::steady_clock::now() + kGathering;
  while (true) {
    bool missing = false;
    for (int r = 0; r < size_; ++r) {
      auto& c = calls[static_cast<size_t>(r)];
      if (c && c->seq == mine.seq) continue;
      if (store_->check({callKey(r)})) c = CollectiveCall::decode(toString(store_->get(callKey(r))));
      missing = missing || !c || c->seq != mine.seq;
    }
    if (!missing || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& c : calls) {
    if (c && c->seq != mine.seq) c.reset();
  }
  return publishVerdict(calls);
}

std::string CallWatch::publishVerdict(const std::vector<std::optional<CollectiveCall>>& calls) {
  const std::string v = mismatchText(calls, names_);
  setVerdict(v);
  store_->set(kVerdict, toBytes(v));
  return v;
}

void CallWatch::setVerdict(const std::string& v) {
  std::lock_guard<std::mutex> lock(verdict_mutex_);
  verdict_ = v;
}

std::string CallWatch::knownVerdict() {
  std::lock_guard<std::mutex> lock(verdict_mutex_);
  return verdict_;
}

std::string CallWatch::verdict() {
  if (std::string known = knownVerdict(); !known.empty()) return known;
  try {
    auto quick = store_->quickHandle(kLookBack);
    if (quick->check({kVerdict})) setVerdict(toString(quick->get(kVerdict)));
  } catch (const std::exception&) {
    // Not known: the store does not answer.
  }
  return knownVerdict();
}

// Each waiting rank published its call once it had waited a second (probe()): the ranks whose
// call is not at `seq` never got there.
Findings CallWatch::lookBack(uint64_t seq) {
  Findings f;
  if ((f.verdict = knownVerdict()).empty()) {
    try {
      auto quick = store_->quickHandle(kLookBack);
      if (quick->check({kVerdict})) return {toString(quick->get(kVerdict)), {}};
      for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        std::optional<CollectiveCall> c;
        if (quick->check({callKey(r)})) c = CollectiveCall::decode(toString(quick->get(callKey(r))));
        if (!c || c->seq != seq) f.clues.absent.push_back(names_.empty() ? r : names_[static_cast<size_t>(r)]);
      }
    } catch (const std::exception&) {
      f.clues = FailureClues{};
      f.clues.store_silent = true;
    }
  }
  return f;
}

std::string CallWatch::exchange(const std::string& place, const CollectiveCall& mine,
                                std::chrono::milliseconds patience) {
  std::vector<std::optional<CollectiveCall>> calls(static_cast<size_t>(size_));
  calls[static_cast<size_t>(rank_)] = mine;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    store_->set(fmt::format("{}/{}", place, rank_), toBytes(mine.encode()));
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const std::string key = fmt::format("{}/{}", place, r);
      try {
        store_->wait({key}, patience);
        calls[static_cast<size_t>(r)] = CollectiveCall::decode(toString(store_->get(key)));
      } catch (const StoreTimeout&) {
        // It did not say in time: listed as not known.
      }
    }
    return publishVerdict(calls);
  } catch (const std::exception&) {
    return mismatchText(calls, names_);
  }
}

std::string CallWatch::compareBeforeRunning(Backend& checker, const CollectiveCall& mine) {
  auto words = mine.words();
  const size_t world = static_cast<size_t>(checker.size()), n = CollectiveCall::kWords;
  std::vector<int64_t> all(world * n);
  checker.allGather(cpuTensor(words.data(), n), cpuTensor(all.data(), all.size()))->wait();
  bool same = true;
  std::vector<std::optional<CollectiveCall>> calls;
  for (size_t r = 0; r < world; ++r) {
    calls.push_back(CollectiveCall::fromWords(&all[r * n]));
    same = same && calls.back() && calls.back()->fingerprint() == mine.fingerprint();
  }
  return same ? "" : mismatchText(calls);
}

}  // namespace accel
