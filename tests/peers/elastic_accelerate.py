#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# elastic_accelerate.py - an Accelerate script written for machines that come and go, as its
# users write one for torchrun's elastic mode: it saves its state every --every optimizer steps
# (save_state into DIR/step-N, then DIR/latest names it) and, whenever it starts, resumes from
# DIR/latest with load_state. Run by tests/cluster/elastic_cases.sh on hosts that come and go,
# and by the same case as static runs split where that run resumed. Batches are split
# (split_batches=True): every optimizer step sees the same global batch for any number of
# processes. Prints "saved step N" and "resumed at step N" (main process), and at the end
# "eval_loss L weights W processes P" with the loss gathered from every process.
import argparse
import json
import os
import time

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration, set_seed

GLOBAL_BATCH = 12
SAMPLES = 240
FEATURES = 16


def data():
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    w = torch.randn(FEATURES, 1, generator=g)
    return torch.utils.data.TensorDataset(x, torch.tanh(x @ w))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--every", type=int, required=True, help="save_state every N steps")
    p.add_argument("--dir", required=True)
    p.add_argument("--pause", type=float, default=0, help="each step lasts at least this many seconds")
    args = p.parse_args()
    accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(split_batches=True))
    set_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    train = torch.utils.data.DataLoader(data(), batch_size=GLOBAL_BATCH, shuffle=False)
    model, optimizer, train = accelerator.prepare(model, optimizer, train)
    step = 0
    latest = os.path.join(args.dir, "latest")
    if os.path.exists(latest):
        with open(latest) as f:
            name = f.read().strip()
        accelerator.load_state(os.path.join(args.dir, name))
        with open(os.path.join(args.dir, name, "step.json")) as f:
            step = json.load(f)["step"]
        accelerator.print(f"resumed at step {step} with {accelerator.num_processes} processes", flush=True)
    while step < args.steps:
        for x, y in train:
            started = time.monotonic()
            loss = torch.nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % args.every == 0:
                where = os.path.join(args.dir, f"step-{step}")
                accelerator.save_state(where)
                if accelerator.is_main_process:
                    with open(os.path.join(where, "step.json"), "w") as f:
                        json.dump({"step": step}, f)
                    with open(latest + ".tmp", "w") as f:
                        f.write(f"step-{step}\n")
                    os.replace(latest + ".tmp", latest)
                accelerator.wait_for_everyone()
                accelerator.print(f"saved step {step}", flush=True)
            time.sleep(max(0.0, args.pause - (time.monotonic() - started)))
            if step == args.steps:
                break
    with torch.no_grad():
        x, y = data().tensors
        eval_loss = float(torch.nn.functional.mse_loss(accelerator.unwrap_model(model)(x), y))
    weights = sum(float((p.detach().double() ** 2).sum()) for p in accelerator.unwrap_model(model).parameters())
    accelerator.print(f"eval_loss {eval_loss!r} weights {weights!r} processes {accelerator.num_processes}", flush=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
