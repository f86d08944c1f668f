// SPDX-License-Identifier: Apache-2.0
// `accel estimate-memory MODEL`: Accelerate's estimate-memory table for a local safetensors
// model (lib/model/memory_table.h), read from headers only, then what training with Adam holds
// per process under DDP, ZeRO and FSDP (lib/model/memory_estimate.h) against the GPUs this
// machine shows (lib/hardware/gpu_probe.h).
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "lib/common/error.h"
#include "lib/hardware/gpu_probe.h"
#include "lib/model/memory_estimate.h"
#include "lib/model/memory_table.h"
#include "lib/model/model_files.h"

namespace accel {

namespace {

using nlohmann::json;

struct Gpus {
  int count = 0;
  unsigned long long smallest_memory = 0;  // bytes; 0 when unknown or none
  std::string name;                        // the smallest one's
  std::string reason;                      // why none, when count is 0
};

Gpus visibleGpus() {
  GpuReport report = probeGpus();
  Gpus gpus;
  gpus.count = static_cast<int>(report.devices.size());
  gpus.reason = report.source.empty() ? "no NVIDIA driver: " + report.unavailable_reason : "no GPU is visible";
  for (const auto& d : report.devices) {
    if (gpus.name.empty() || d.memory_total < gpus.smallest_memory)
      gpus.smallest_memory = d.memory_total, gpus.name = d.name;
  }
  return gpus;
}

TrainingSetup setupFrom(const EstimateMemoryOptions& o, const Gpus& gpus) {
  TrainingSetup setup;
  setup.machines = o.num_machines;
  setup.processes = o.num_processes >= 0 ? o.num_processes : std::max(gpus.count, 1) * o.num_machines;
  if (o.mixed_precision != "no" && o.mixed_precision != "bf16" && o.mixed_precision != "fp16") {
    throw UsageError("--mixed_precision: unknown value '" + o.mixed_precision + "'", "one of: no, bf16, fp16");
  }
  setup.precision = o.mixed_precision == "no" ? Precision::Full : Precision::Mixed;
  return setup;
}

json bytesJson(const AccelerateSize& size) { return size.bits % 8 == 0 ? json(size.bits / 8) : json(size.bytes()); }

// null: no GPU to compare with.
json fitsJson(uint64_t bytes, const Gpus& gpus) {
  return gpus.smallest_memory == 0 ? json() : json(bytes <= gpus.smallest_memory);
}

json estimateJson(const std::string& path, const ModelFiles& files, const ModelSizes& sizes,
                  const std::vector<std::string>& dtypes, const TrainingSetup& setup, const Gpus& gpus) {
  json shards = json::array();
  for (const auto& s : files.shards) shards.push_back(s.path);
  json rows = json::array();
  for (const DtypeRow& r : dtypeRows(sizes, dtypes)) {
    rows.push_back({{"dtype", r.dtype},
                    {"largest_layer_bytes", r.largest_layer},
                    {"total_bytes", r.total},
                    {"training_bytes", r.training < 0 ? json() : json(r.training)}});
  }
  json strategies = json::array();
  for (const auto& s : estimateStrategies(sizes, setup)) {
    strategies.push_back(
        {{"name", s.name}, {"bytes_per_process", s.bytes_per_process}, {"fits", fitsJson(s.bytes_per_process, gpus)}});
  }
  const auto [p, g, k] = bytesPerParameter(setup.precision);
  return {{"model", path},
          {"index", files.index.empty() ? json() : json(files.index)},
          {"files", shards},
          {"tensors", sizes.tensors},
          {"parameters", sizes.parameters},
          {"stored_bytes", sizes.stored_bytes},
          {"total_bytes", bytesJson(sizes.total)},
          {"largest_layer",
           {{"name", sizes.largest.name},
            {"bytes", bytesJson(sizes.largest.size)},
            {"parameters", sizes.largest.parameters}}},
          {"dtypes", rows},
          {"training",
           {{"processes", setup.processes},
            {"machines", setup.machines},
            {"precision", setup.precision == Precision::Mixed ? "mixed" : "full"},
            {"bytes_per_parameter", {{"parameters", p}, {"gradients", g}, {"optimizer", k}}},
            {"strategies", strategies}}},
          {"gpus",
           {{"count", gpus.count},
            {"smallest_memory_bytes", gpus.count ? json(gpus.smallest_memory) : json()},
            {"reason", gpus.count ? json() : json(gpus.reason)}}}};
}

std::string gpuLine(const Gpus& gpus, const TrainingSetup& setup) {
  if (gpus.count == 0) return fmt::format("GPUs: none ({}), so whether it fits is not checked\n", gpus.reason);
  std::string line = fmt::format("GPUs: {} visible, the smallest {} with {}\n", gpus.count, gpus.name,
                                 convertBytes(static_cast<double>(gpus.smallest_memory), true));
  const int per_machine = setup.processes / setup.machines;
  if (per_machine > gpus.count) {
    line += fmt::format("note: {} processes per machine but {} GPUs visible here\n", per_machine, gpus.count);
  }
  return line;
}

std::string trainingText(const ModelSizes& sizes, const TrainingSetup& setup, const Gpus& gpus) {
  const auto [p, g, k] = bytesPerParameter(setup.precision);
  std::string out = fmt::format(
      "\nTraining with Adam, model states per process: {} process(es) on {} machine(s), {} precision ({} + {} + {} "
      "bytes per parameter: parameters, gradients, optimizer states; activations not counted)\n",
      setup.processes, setup.machines, setup.precision == Precision::Mixed ? "mixed" : "full (fp32)", p, g, k);
  for (const auto& s : estimateStrategies(sizes, setup)) {
    std::string need = convertBytes(static_cast<double>(s.bytes_per_process), true);
    std::string fits;
    if (gpus.smallest_memory) fits = s.bytes_per_process <= gpus.smallest_memory ? "fits" : "does not fit";
    out += fmt::format("  {:<18} {:>10}{}\n", s.name, need, fits.empty() ? "" : "  " + fits);
  }
  out += fmt::format("{} parameters in {} tensors; largest layer `{}` ({} parameters)\n", sizes.parameters,
                     sizes.tensors, sizes.largest.name, sizes.largest.parameters);
  return out + gpuLine(gpus, setup);
}

}  // namespace

int runEstimateMemory(const EstimateMemoryOptions& options) {
  const std::vector<std::string> dtypes = options.dtypes.empty() ? estimateDtypes() : options.dtypes;
  checkEstimateDtypes(dtypes);
  if (options.num_machines < 1) throw UsageError("--num_machines must be at least 1");
  if (options.num_processes == 0 || options.num_processes < -1) throw UsageError("--num_processes must be at least 1");
  ModelFiles files = readModelFiles(options.model);
  ModelSizes sizes = measureModel(files);
  Gpus gpus = visibleGpus();
  TrainingSetup setup = setupFrom(options, gpus);
  estimateStrategies(sizes, setup);  // an impossible setup is refused before anything is printed
  if (options.json) {
    std::cout << estimateJson(options.model, files, sizes, dtypes, setup, gpus).dump(2) << "\n";
  } else {
    std::cout << accelerateTable(sizes, dtypes, options.model) << "\n" << trainingText(sizes, setup, gpus);
  }
  return 0;
}

}  // namespace accel
