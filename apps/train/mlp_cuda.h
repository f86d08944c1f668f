// SPDX-License-Identifier: Apache-2.0
// The reference trainer's CUDA path (mlp_cuda.cu, built when nvcc and NCCL were found; otherwise
// mlp_cuda_none.cc, where built() is false and the constructor throws): the same MLP, data and SGD with momentum on one
// CUDA device. Every kernel runs on the legacy default stream. Backward adds each gradient into the buffer it is given
// (the Reducer's device bucket) and calls ready() in Mlp::backward's order, so NCCL reduces the last layer while the
// first is still computed. Each sum runs in the CPU path's order with unfused multiply-adds, so the two paths differ
// only where CUDA's expf does. Blocking where it returns host data; not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "apps/train/dataset.h"
#include "apps/train/mlp.h"

namespace accel::train {

class CudaMlp {
 public:
  // Whether this build has the CUDA path.
  static bool built();
  // Uploads the training set. `half_working`: the forward pass uses the masters rounded to fp16
  // (or bf16 with `bf16`), as MasterWeights does on the CPU.
  CudaMlp(const Mlp& model, const Dataset& train, int device, bool half_working, bool bf16);
  ~CudaMlp();
  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  // Parameters and momentum (Mlp::params' layout) between host and device.
  void upload(const std::vector<std::vector<float>>& masters, const std::vector<std::vector<float>>& momentum);
  void download(std::vector<std::vector<float>>& masters, std::vector<std::vector<float>>& momentum) const;

  // Forward and backward over training rows `rows`; see Mlp::backward for `scale`, `divisor`,
  // `grad` (device pointers) and `ready`. Returns the summed loss over the rows.
  double forwardBackward(const std::vector<size_t>& rows, float scale, size_t divisor,
                         const std::function<float*(size_t)>& grad, const std::function<void(size_t)>& ready);
  // Multiplies every slot's gradient by `inv_scale`; true when any result is inf or NaN.
  bool unscale(const std::vector<float*>& grads, const std::vector<size_t>& counts, float inv_scale);
  // m = 0.9 m + g; w -= lr m on each slot's view of the parameters, then a fresh working copy.
  void sgd(const std::vector<Mlp::Slot>& slots, const std::vector<float*>& grads, float lr);
  // Logits (n x kClasses) of `n` samples at host `x`.
  std::vector<float> logits(const float* x, size_t n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::train
