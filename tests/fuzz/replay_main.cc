// SPDX-License-Identifier: Apache-2.0
// Runs a fuzz target without libFuzzer (the ordinary g++ builds, ctest label `fuzz`): the empty
// input first (libFuzzer's first input too), then every regular file in the directories named
// on the command line, in name order, each passed once to LLVMFuzzerTestOneInput. A broken property, sanitizer report
// or uncaught exception ends the process as it would end the fuzzer, so the test fails naming the input (printed
// first). A directory that does not exist is skipped (git keeps no empty regressions/<target>/), but finding no input
// at all is an error: a seed directory must not go missing unnoticed. Usage: fuzz_replay_<target> DIR...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

// Tells a target that it is being replayed, not fuzzed (weak there, so libFuzzer builds lack it):
// tcp_store_server then checks every input on the live server, not every 32nd.
extern "C" int accelFuzzReplaying() { return 1; }

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!fs::is_directory(argv[i], ec)) {
      std::fprintf(stderr, "replay: %s: no such directory, nothing to replay there\n", argv[i]);
      continue;
    }
    for (const auto& entry : fs::directory_iterator(argv[i])) {
      // Dot files (.gitkeep, editor droppings) are not inputs.
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') inputs.push_back(entry.path());
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no input found; expected the target's seeds in the directories given\n");
    return 1;
  }
  std::sort(inputs.begin(), inputs.end());
  std::fprintf(stderr, "replay: the empty input\n");
  const std::unique_ptr<uint8_t[]> nothing(new uint8_t[1]);
  LLVMFuzzerTestOneInput(nothing.get(), 0);
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), data.size());
    // A heap block of exactly the input's size, as libFuzzer passes it: ASan sees any over-read.
    std::unique_ptr<uint8_t[]> exact(new uint8_t[std::max<size_t>(data.size(), 1)]);
    std::copy(data.begin(), data.end(), exact.get());
    LLVMFuzzerTestOneInput(exact.get(), data.size());
  }
  std::printf("replayed the empty input and %zu more, no failure\n", inputs.size());
  return 0;
}
