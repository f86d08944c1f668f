#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# deepspeed_train.py - a small Accelerate script as its DeepSpeed tutorials have users write it,
# run by check_deepspeed_training.py under `accelerate launch` and under `accel launch` with a
# DeepSpeed config (ZeRO-2; ZeRO-3 with optimizer and parameters offloaded to the CPU): AdamW,
# 20 micro-batches through accumulate(), save_state at the end. On a machine without GPUs the
# script picks the gloo backend, as Accelerate needs there.
# Writes --out (main process): every micro-batch's loss as float.hex (exact), the paradigm, the
# optimizer DeepSpeed ran (DeepSpeedCPUAdam with offload), the process count.
import argparse
import json

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs, set_seed

STEPS = 20


def data():
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(320, 16, generator=g)
    y = torch.tanh(x @ torch.randn(16, 1, generator=g))
    return torch.utils.data.TensorDataset(x, y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--save", required=True)
    args = p.parse_args()
    accelerator = Accelerator(kwargs_handlers=[InitProcessGroupKwargs(backend="gloo")])
    set_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    train = torch.utils.data.DataLoader(data(), batch_size=8, shuffle=False)
    model, optimizer, train = accelerator.prepare(model, optimizer, train)
    # DeepSpeed runs the model in the config's precision; the inputs are given in it.
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(accelerator.mixed_precision, torch.float32)
    losses = []
    for x, y in train:
        with accelerator.accumulate(model):
            out = model(x.to(accelerator.device, dtype))
            loss = torch.nn.functional.mse_loss(out.float(), y.to(out.device).float())
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        losses.append(float(loss).hex())
        if len(losses) == STEPS:
            break
    accelerator.save_state(args.save)
    if accelerator.is_main_process:
        inner = getattr(optimizer, "optimizer", optimizer)
        engine_optimizer = getattr(inner, "optimizer", inner)
        with open(args.out, "w") as f:
            json.dump({"losses": losses, "distributed_type": str(accelerator.distributed_type),
                       "processes": accelerator.num_processes, "optimizer": type(engine_optimizer).__name__}, f)
    accelerator.end_training()


if __name__ == "__main__":
    main()
