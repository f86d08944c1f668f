// SPDX-License-Identifier: Apache-2.0
// The ZeRO tests' model, defined identically in zero_torch.py: an input projection, `depth`
// residual blocks in a ModuleList (Linear, LayerNorm, GELU; the sharding units of fsdp_transformer_layer_cls_to_wrap
// "Block") and a head. Widths from 8 to thousands: a small one for parity, a large one for memory.
#pragma once

#include <string>

#include <torch/torch.h>

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(int64_t width)
      : fc(register_module("fc", torch::nn::Linear(width, width))),
        norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x + torch::gelu(norm(fc(x))); }
  torch::nn::Linear fc;
  torch::nn::LayerNorm norm;
};
TORCH_MODULE(Block);

struct ZeroNetImpl : torch::nn::Module {
  ZeroNetImpl(int64_t inputs, int64_t width, int64_t depth, int64_t classes)
      : embed(register_module("embed", torch::nn::Linear(inputs, width))),
        blocks(register_module("blocks", torch::nn::ModuleList())),
        head(register_module("head", torch::nn::Linear(width, classes))) {
    for (int64_t i = 0; i < depth; ++i) blocks->push_back(Block(width));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = embed(x);
    for (const auto& b : *blocks) h = b->as<Block>()->forward(h);
    return head(h);
  }
  torch::nn::Linear embed;
  torch::nn::ModuleList blocks;
  torch::nn::Linear head;
};
TORCH_MODULE(ZeroNet);
