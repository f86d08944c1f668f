// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/prepared_model.h"

#include <numeric>

#include <torch/torch.h>

namespace accel {

// torch.nn.utils.clip_grad_norm_'s per-tensor norm: torch.norm over every dimension named (another
// kernel than libtorch C++'s Tensor::norm(p), which sums 1-norms in another order).
std::vector<at::Tensor> ModelEngine::gradientNorms(double norm_type) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> norms;
  for (const auto& p : gradientHolders()) {
    const at::Tensor g = p.grad();
    if (!g.defined()) continue;
    std::vector<int64_t> dims(static_cast<size_t>(g.dim()));
    std::iota(dims.begin(), dims.end(), 0);
    norms.push_back(at::norm(g, norm_type, dims, false));
  }
  return norms;
}

}  // namespace accel
