// SPDX-License-Identifier: Apache-2.0
// A parameter's state in a libtorch optimizer, whatever its key: libtorch 1 keys Optimizer::state()
// by the printed TensorImpl address, libtorch 2 by the address itself. Null before the first step.
#pragma once

#include <sstream>
#include <string>
#include <type_traits>

#include <torch/optim/optimizer.h>

namespace accel {

namespace detail {
template <typename States> torch::optim::OptimizerParamState* findState(States& states, const at::Tensor& param) {
  auto it = states.end();
  if constexpr (std::is_same_v<typename States::key_type, std::string>) {
    std::ostringstream key;
    key << param.unsafeGetTensorImpl();
    it = states.find(key.str());
  } else {
    it = states.find(param.unsafeGetTensorImpl());
  }
  return it == states.end() ? nullptr : it->second.get();
}
}  // namespace detail

inline torch::optim::OptimizerParamState* optimizerState(torch::optim::Optimizer& optimizer, const at::Tensor& param) {
  return detail::findState(optimizer.state(), param);
}

}  // namespace accel
