// SPDX-License-Identifier: Apache-2.0
// accel-bench: `accel launch --cpu --num_processes 2 build/bin/accel-bench [options]`.
//   --backend auto|shm|gloo|nccl  --op all_reduce|broadcast|all_gather|reduce_scatter|barrier
//   --dtype f32|f64|f16|bf16|i32|i64|u8  --sizes MIN:MAX (doubling) or a,b,c (4, 64K, 1M)
//   --iters N  --json
//   store [--ranks N] [--ops M] [--processes]   TCPStore ops/s and barrier time for N clients
//   amp [--sizes BYTES]                          casts and unscale+check in GB/s beside memcpy
//   preflight                                    `accel test`'s checks (preflight.cc)
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/bench/bench.h"
#include "apps/cli_parse.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"
#include "runtime/comm/nccl/nccl_backend.h"
#include "runtime/state/accelerator.h"

using namespace accel;
using namespace accel::bench;

namespace {

// "4", "64K", "1M", "2G": bytes; nullopt when not a positive size.
std::optional<size_t> parseSize(const std::string& text) {
  std::string t = toUpper(trim(text));
  size_t unit = 1;
  if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G')) {
    unit = t.back() == 'K' ? 1u << 10 : t.back() == 'M' ? 1u << 20 : 1u << 30;
    t.pop_back();
  }
  auto v = parseInt(t);
  if (!v || *v <= 0 || *v > (1LL << 40)) return std::nullopt;
  return static_cast<size_t>(*v) * unit;
}

// "MIN:MAX" (doubling) or "a,b,c"; an error message for the first bad size, else "".
std::string parseSizes(const std::string& text, std::vector<size_t>& sizes) {
  sizes.clear();
  auto one = [&](const std::string& part) {
    auto size = parseSize(part);
    if (!size) throw std::invalid_argument("bad size '" + part + "' (e.g. 4, 64K, 1M, 2G)");
    return *size;
  };
  try {
    if (auto colon = text.find(':'); colon != std::string::npos) {
      for (size_t s = one(text.substr(0, colon)), end = one(text.substr(colon + 1)); s <= end; s *= 2)
        sizes.push_back(s);
    } else {
      for (const auto& part : split(text, ',')) sizes.push_back(one(part));
    }
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return sizes.empty() ? "--sizes '" + text + "' selects no size" : "";
}

Args parse(int argc, char** argv) {
  Args a;
  std::string sizes = "4:256M", dtype = "f32";
  CLI::App app{"accel-bench: collective, store and amp benchmarks; run it under `accel launch`", "accel-bench"};
  lastValueWins(app);
  app.add_option("--backend", a.backend,
                 "auto (the runtime's choice: shared memory on one machine), shm (the same, an error without "
                 "it), gloo (ACCEL_SHM=0), or nccl (CUDA memory)")
      ->check(CLI::IsMember({"auto", "shm", "gloo", "nccl"}))
      ->capture_default_str();
  app.add_option("--op", a.op, "the collective (barrier: its latency alone, --sizes ignored)")
      ->check(CLI::IsMember({"all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier"}))
      ->capture_default_str();
  app.add_option("--dtype", dtype, "f32, f64, f16, bf16, i32, i64 or u8")
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16", "i32", "i64", "u8"}))
      ->capture_default_str();
  app.add_option("--sizes", sizes, "bytes: MIN:MAX (doubling) or a,b,c (4, 64K, 1M)")->capture_default_str();
  app.add_option("--iters", a.iters, "iterations per size (0: by size, as the Gloo anchor does)")
      ->check(wholeNumberAtLeast(0));
  app.add_flag("--json", a.json, "one JSON object per line");
  auto* store = app.add_subcommand("store", "TCPStore set+get operations per second and barrier time for N clients");
  store->add_option("--ranks", a.store_ranks, "clients (1 to 1024)")
      ->check(wholeNumberAtLeast(1))
      ->capture_default_str();
  store->add_option("--ops", a.store_ops, "set+get pairs per client")
      ->check(wholeNumberAtLeast(1))
      ->capture_default_str();
  store->add_flag("--processes", a.store_processes, "clients are processes, not threads");
  auto* amp =
      app.add_subcommand("amp", "casts and unscale+check in GB/s beside a plain copy (and on a GPU when present)");
  amp->add_option("--sizes", sizes, "buffer bytes (the largest of MIN:MAX or a,b,c)");
  auto* flight = app.add_subcommand("flight", "what the flight recorder adds to one collective, in nanoseconds");
  auto* preflight = app.add_subcommand(
      "preflight", "accel test's checks: rendezvous, store, barrier, every collective's results and bandwidth");
  parseCommandLine(app, argc, argv);
  if (preflight->parsed()) a.mode = "preflight";
  if (store->parsed()) a.mode = "store";
  if (amp->parsed()) a.mode = "amp";
  if (flight->parsed()) a.mode = "flight";
  if (a.store_ranks > 1024) exitWithUsageError(app, "--ranks must be from 1 to 1024");
  if (std::string why = parseSizes(sizes, a.sizes); !why.empty()) exitWithUsageError(app, "--sizes: " + why);
  for (auto d :
       {DataType::F32, DataType::F64, DataType::F16, DataType::BF16, DataType::I32, DataType::I64, DataType::U8}) {
    if (dtype == dtypeName(d)) a.dtype = d;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  try {
    if (args.mode == "store") return runStore(args);
    if (args.mode == "amp") return runAmp(args);
    if (args.mode == "flight") return runFlight(args);
    if (args.backend == "gloo") ::setenv(env::kAccelShm.name(), "0", 1);  // before the group is made
    Accelerator acc;
    if (args.mode == "preflight") return runPreflight(acc);
    Backend& cpu = acc.processGroup().backend();
    if (args.backend == "shm" && std::string(cpu.name()).rfind("shm", 0) != 0) {
      std::cerr
          << "accel-bench: error: --backend shm: this group uses " << cpu.name()
          << " (ranks on different machines, ACCEL_SHM=0, or shared memory unavailable: see the runtime's warning)\n";
      return 1;
    }
    if (args.backend != "nccl") return runCollectives(args, acc, cpu);
    if (NcclBackend::available()) {
      if (acc.device().type != DeviceType::CUDA) {
        std::cerr << "accel-bench: skipped: --backend nccl needs a CUDA device, and none is visible\n";
        return 0;
      }
      NcclBackend nccl(acc.store(), acc.processIndex(), acc.numProcesses(), acc.device().index, {});
      return runCollectives(args, acc, nccl);
    }
    std::cerr << "accel-bench: error: --backend " << args.backend << " is not available in this build (no NCCL)\n";
    return static_cast<int>(ExitStatus::Usage);
  } catch (const std::exception& e) {
    std::cerr << "accel-bench: error: " << e.what() << "\n";
    return 1;
  }
}
