// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/text_exchange.h"

#include <numeric>

namespace accel {

namespace {

Tensor bytesTensor(std::string& s) { return {s.data(), s.size(), DataType::U8}; }

}  // namespace

std::string broadcastText(Backend& group, std::string text, int root) {
  int64_t length = static_cast<int64_t>(text.size());
  group.broadcast(cpuTensor(&length, 1), root)->wait();
  text.resize(static_cast<size_t>(length));
  group.broadcast(bytesTensor(text), root)->wait();
  return text;
}

std::vector<std::string> allGatherText(Backend& group, const std::string& text) {
  const size_t world = static_cast<size_t>(group.size());
  std::vector<int64_t> lengths(world);
  int64_t mine = static_cast<int64_t>(text.size());
  group.allGather(cpuTensor(&mine, 1), cpuTensor(lengths.data(), world))->wait();
  const std::vector<size_t> counts(lengths.begin(), lengths.end());
  std::string all(std::accumulate(counts.begin(), counts.end(), size_t{0}), '\0');
  std::string in = text;
  group.allGatherV(bytesTensor(in), bytesTensor(all), counts)->wait();
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t c : counts) {
    out.push_back(all.substr(at, c));
    at += c;
  }
  return out;
}

}  // namespace accel
