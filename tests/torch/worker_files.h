// SPDX-License-Identifier: Apache-2.0
// What the libtorch component's test workers write for their Python drivers: tensors by name,
// as torch::pickle_save writes them (read by torch.load with weights_only=False: the dict
// carries TorchScript type tags), and a module's state copied to the CPU.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <torch/torch.h>

inline void saveTensors(const std::string& path, const c10::Dict<std::string, torch::Tensor>& tensors) {
  const std::vector<char> bytes = torch::pickle_save(tensors);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Parameters (and buffers when asked) whole, on the CPU; reading a stage-3 parameter gathers it.
inline c10::Dict<std::string, torch::Tensor> moduleState(torch::nn::Module& m, bool buffers = true) {
  c10::Dict<std::string, torch::Tensor> out;
  for (const auto& p : m.named_parameters()) out.insert(p.key(), p.value().detach().to(torch::kCPU, false, true));
  if (!buffers) return out;
  for (const auto& b : m.named_buffers()) out.insert(b.key(), b.value().detach().to(torch::kCPU, false, true));
  return out;
}
