// SPDX-License-Identifier: Apache-2.0
// accel-bench: `accel launch --cpu --num_processes 2 build/bin/accel-bench [options]`.
//   --backend gloo|nccl  --op all_reduce|broadcast|all_gather|reduce_scatter
//   --dtype f32|f64|f16|bf16|i32|i64|u8  --sizes MIN:MAX (doubling) or a,b,c (4, 64K, 1M)
//   --iters N  --json
//   store [--ranks N] [--ops M] [--processes]   TCPStore ops/s and barrier time for N clients
//   amp [--sizes BYTES]                          casts and unscale+check in GB/s beside memcpy
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "apps/bench/bench.h"
#include "lib/common/strings.h"
#include "runtime/state/accelerator.h"
#ifdef ACCEL_HAVE_NCCL
#include "runtime/comm/nccl_backend.h"
#endif

using namespace accel;
using namespace accel::bench;

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "accel-bench: error: " << why << "\n"
            << "usage: accel-bench [--backend gloo|nccl] [--op OP] [--dtype T] [--sizes 4:256M] [--iters N] [--json]\n"
            << "       accel-bench store [--ranks N] [--ops M] [--processes]\n"
            << "       accel-bench amp [--sizes BYTES]\n";
  std::exit(2);
}

size_t parseSize(const std::string& text) {
  std::string t = toUpper(trim(text));
  size_t unit = 1;
  if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G')) {
    unit = t.back() == 'K' ? 1u << 10 : t.back() == 'M' ? 1u << 20 : 1u << 30;
    t.pop_back();
  }
  auto v = parseInt(t);
  if (!v || *v <= 0) usage("bad size '" + text + "'");
  return static_cast<size_t>(*v) * unit;
}

std::vector<size_t> parseSizes(const std::string& text) {
  std::vector<size_t> sizes;
  if (auto colon = text.find(':'); colon != std::string::npos) {
    for (size_t s = parseSize(text.substr(0, colon)), end = parseSize(text.substr(colon + 1)); s <= end; s *= 2) sizes.push_back(s);
  } else {
    for (const auto& part : split(text, ',')) sizes.push_back(parseSize(part));
  }
  return sizes;
}

DataType parseType(const std::string& t) {
  for (auto d : {DataType::F32, DataType::F64, DataType::F16, DataType::BF16, DataType::I32, DataType::I64, DataType::U8}) {
    if (t == dtypeName(d)) return d;
  }
  usage("unknown dtype '" + t + "'");
}

Args parse(int argc, char** argv) {
  Args a;
  a.sizes = parseSizes("4:256M");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    auto count = [&](int min) {
      std::string v = value();
      auto n = parseInt(v);
      if (!n || *n < min || *n > 1'000'000'000) usage(fmt::format("{} needs a whole number of at least {}, not '{}'", arg, min, v));
      return static_cast<int>(*n);
    };
    if (arg == "store") a.mode = "store";
    else if (arg == "amp") a.mode = "amp";
    else if (arg == "--backend") a.backend = value();
    else if (arg == "--op") a.op = value();
    else if (arg == "--dtype") a.dtype = parseType(value());
    else if (arg == "--sizes") a.sizes = parseSizes(value());
    else if (arg == "--iters") a.iters = count(0);
    else if (arg == "--json") a.json = true;
    else if (arg == "--ranks") a.store_ranks = count(1);
    else if (arg == "--ops") a.store_ops = count(1);
    else if (arg == "--processes") a.store_processes = true;
    else usage("unknown argument '" + arg + "'");
  }
  if (a.op != "all_reduce" && a.op != "broadcast" && a.op != "all_gather" && a.op != "reduce_scatter") {
    usage("unknown --op '" + a.op + "'");
  }
  if (a.store_ranks < 1 || a.store_ranks > 1024) usage("--ranks must be from 1 to 1024");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  try {
    if (args.mode == "store") return runStore(args);
    if (args.mode == "amp") return runAmp(args);
    Accelerator acc;
    if (args.backend == "gloo") return runCollectives(args, acc, acc.processGroup().backend());
#ifdef ACCEL_HAVE_NCCL
    if (args.backend == "nccl") {
      if (acc.device().type != DeviceType::CUDA) {
        std::cerr << "accel-bench: skipped: --backend nccl needs a CUDA device, and none is visible\n";
        return 0;
      }
      NcclBackend nccl(acc.store(), acc.processIndex(), acc.numProcesses(), acc.device().index, {});
      return runCollectives(args, acc, nccl);
    }
#endif
    usage("--backend " + args.backend + " is not available in this build");
  } catch (const std::exception& e) {
    std::cerr << "accel-bench: error: " << e.what() << "\n";
    return 1;
  }
}
