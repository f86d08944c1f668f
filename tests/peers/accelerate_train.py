#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# accelerate_train.py - a small Accelerate training script as users write them, run by
# check_training.py alone (one process) and under `accel launch --cpu --num_processes 2`:
# Accelerator.prepare, accumulate, autocast (bf16 with --mixed_precision bf16), gather_for_metrics,
# save_state / load_state. Batches are split (split_batches=True): the global batch is the same
# for any number of processes, each gets its share of its rows, so every run sees the same
# samples per optimizer step and the LR scheduler steps once per optimizer step.
# Writes --out (main process): {"step", "eval_loss", "weights"} with the eval loss over the whole
# evaluation set (gathered from every process) and the weights' sum of squares.
import argparse
import json
import os

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration, set_seed

GLOBAL_BATCH = 16
SAMPLES = 320  # 20 micro-batches per epoch: 10 optimizer steps (accumulation 2), epochs end on steps 10, 20, ...
FEATURES = 16


def data():
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    w = torch.randn(FEATURES, 1, generator=g)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(SAMPLES, 1, generator=g)
    return torch.utils.data.TensorDataset(x, y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=50, help="optimizer steps in all (including resumed ones)")
    p.add_argument("--stop_at", type=int, default=0, help="stop (and --save) after this many steps")
    p.add_argument("--mixed_precision", default="no")
    p.add_argument("--save", default="", help="save_state here at the end")
    p.add_argument("--resume", default="", help="load_state from here first")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    accelerator = Accelerator(mixed_precision=args.mixed_precision, gradient_accumulation_steps=2,
                              dataloader_config=DataLoaderConfiguration(split_batches=True))
    set_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=args.steps)
    train = torch.utils.data.DataLoader(data(), batch_size=GLOBAL_BATCH, shuffle=False)
    evaluation = torch.utils.data.DataLoader(data(), batch_size=GLOBAL_BATCH * 2, shuffle=False)
    model, optimizer, train, evaluation, scheduler = accelerator.prepare(model, optimizer, train, evaluation, scheduler)

    step = 0
    if args.resume:
        accelerator.load_state(args.resume)
        with open(os.path.join(args.resume, "step.json")) as f:
            step = json.load(f)["step"]
    stop = args.stop_at or args.steps
    while step < stop:
        for x, y in train:
            with accelerator.accumulate(model):
                with accelerator.autocast():
                    loss = torch.nn.functional.mse_loss(model(x).float(), y)
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                step += 1
                if step == stop:
                    break

    model.eval()
    losses = []
    with torch.no_grad():
        for x, y in evaluation:
            with accelerator.autocast():
                per_sample = ((model(x).float() - y) ** 2).mean(dim=1)
            losses.append(accelerator.gather_for_metrics(per_sample))
    eval_loss = torch.cat(losses)
    weights = sum(float((p.detach().double() ** 2).sum()) for p in accelerator.unwrap_model(model).parameters())
    if args.save:
        accelerator.save_state(args.save)
        if accelerator.is_main_process:
            with open(os.path.join(args.save, "step.json"), "w") as f:
                json.dump({"step": step}, f)
    if accelerator.is_main_process:
        with open(args.out, "w") as f:
            json.dump({"step": step, "eval_loss": float(eval_loss.mean()), "eval_samples": eval_loss.numel(),
                       "weights": weights, "processes": accelerator.num_processes,
                       "distributed_type": str(accelerator.distributed_type)}, f)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
