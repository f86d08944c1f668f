// SPDX-License-Identifier: Apache-2.0
// accel-train built without nvcc or NCCL: no CUDA path. The trainer asks built() first and
// trains on the CPU, so nothing below the constructor can be reached.
#include <stdexcept>

#include "apps/train/mlp_cuda.h"

namespace accel::train {

struct CudaMlp::Impl {};

namespace {
[[noreturn]] void notBuilt() {
  throw std::logic_error(
      "accel-train: the CUDA path is not in this build (nvcc and NCCL were not found at configure time)");
}
}  // namespace

bool CudaMlp::built() { return false; }
CudaMlp::CudaMlp(const Mlp&, const Dataset&, int, bool, bool) { notBuilt(); }
CudaMlp::~CudaMlp() = default;
void CudaMlp::upload(const std::vector<std::vector<float>>&, const std::vector<std::vector<float>>&) { notBuilt(); }
void CudaMlp::download(std::vector<std::vector<float>>&, std::vector<std::vector<float>>&) const { notBuilt(); }
double CudaMlp::forwardBackward(const std::vector<size_t>&, float, size_t, const std::function<float*(size_t)>&,
                                const std::function<void(size_t)>&) {
  notBuilt();
}
bool CudaMlp::unscale(const std::vector<float*>&, const std::vector<size_t>&, float) { notBuilt(); }
void CudaMlp::sgd(const std::vector<Mlp::Slot>&, const std::vector<float*>&, float) { notBuilt(); }
std::vector<float> CudaMlp::logits(const float*, size_t) { notBuilt(); }

}  // namespace accel::train
