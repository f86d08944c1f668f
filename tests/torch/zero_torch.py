# SPDX-License-Identifier: Apache-2.0
"""PyTorch's own sharded training of zero_worker.cc's run, for comparing bits: ZeroNet (zero_net.h)
from the worker's init.pt and data.pt, DistributedSampler's order (seed 1234), the same
accumulation and clipping rules, on CPU over Gloo, under one of
  ddp    DistributedDataParallel;
  zero1  DDP with torch.distributed.optim.ZeroRedundancyOptimizer (ZeRO stage 1);
  fsdp2  fully_shard on each Block and the root, reshard_after_forward=False (stage 2);
  fsdp3  the same with reshard_after_forward=True (stage 3).
Writes OUT/torch-final.pt (every parameter whole) and OUT/torch-step.txt (seconds per step, the
median of the steps after the first). Run under torchrun (or `accel torchrun`):
  zero_torch.py KIND WORKER_OUT OUT STEPS sgd|adamw [--width W] [--depth D] [--batch B]
                [--accumulate N] [--clip X]"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data.distributed import DistributedSampler


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        return x + F.gelu(self.norm(self.fc(x)))


class ZeroNet(torch.nn.Module):
    def __init__(self, inputs, width, depth, classes):
        super().__init__()
        self.embed = torch.nn.Linear(inputs, width)
        self.blocks = torch.nn.ModuleList(Block(width) for _ in range(depth))
        self.head = torch.nn.Linear(width, classes)

    def forward(self, x):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h)
        return self.head(h)


def load(path):
    return torch.load(path, weights_only=False)  # torch::pickle_save's dict carries type tags


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["ddp", "zero1", "fsdp2", "fsdp3"])
    for name in ("worker_out", "out"):
        p.add_argument(name)
    p.add_argument("steps", type=int)
    p.add_argument("optimizer", choices=["sgd", "adamw"])
    for name, default in (("--width", 32), ("--depth", 3), ("--batch", 8), ("--accumulate", 1)):
        p.add_argument(name, type=int, default=default)
    p.add_argument("--clip", type=float, default=0.0)
    a = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = load(os.path.join(a.worker_out, "data.pt"))
    model = ZeroNet(16, a.width, a.depth, 10)
    model.load_state_dict(load(os.path.join(a.worker_out, "init.pt")))
    if a.kind in ("ddp", "zero1"):
        model = torch.nn.parallel.DistributedDataParallel(model)
    else:
        from torch.distributed.fsdp import fully_shard
        for b in model.blocks:
            fully_shard(b, reshard_after_forward=a.kind == "fsdp3")
        fully_shard(model, reshard_after_forward=a.kind == "fsdp3")

    def make(params, **kw):
        if a.optimizer == "sgd":
            return torch.optim.SGD(params, lr=0.05, momentum=0.9, **kw)
        return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw)

    if a.kind == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        cls = torch.optim.SGD if a.optimizer == "sgd" else torch.optim.AdamW
        kw = dict(lr=0.05, momentum=0.9) if a.optimizer == "sgd" else dict(lr=1e-3, weight_decay=0.01)
        optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=cls, **kw)
    else:
        optimizer = make(model.parameters())
    x, y = data["x"], data["y"]
    sampler = DistributedSampler(range(len(x)), num_replicas=world, rank=rank, shuffle=True, seed=1234, drop_last=False)
    step, epoch, micro, times = 0, 0, 0, []
    while step < a.steps:
        sampler.set_epoch(epoch)
        order = list(sampler)
        batches = [order[i:i + a.batch] for i in range(0, len(order), a.batch)]
        micro = 0  # Accelerate: a window ends at the epoch's end and the count starts afresh
        for n, idx in enumerate(batches):
            if step >= a.steps:
                break
            start = time.perf_counter()
            micro += 1
            sync = micro % a.accumulate == 0 or n == len(batches) - 1
            if sync:
                micro = 0
            ctx = model.no_sync() if (a.kind in ("ddp", "zero1") and not sync) else torch.enable_grad()
            with ctx:
                loss = F.cross_entropy(model(x[idx]), y[idx])
                (loss / a.accumulate if a.accumulate > 1 else loss).backward()
            if sync:
                if a.clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
                optimizer.step()
                optimizer.zero_grad()
            times.append(time.perf_counter() - start)
            step += 1
        epoch += 1
    inner = model.module if a.kind in ("ddp", "zero1") else model
    final = {}
    for k, v in inner.named_parameters():
        final[k] = v.full_tensor().detach().clone() if hasattr(v, "full_tensor") else v.detach().clone()
    if rank == 0:
        os.makedirs(a.out, exist_ok=True)
        torch.save(final, os.path.join(a.out, "torch-final.pt"))
        with open(os.path.join(a.out, "torch-step.txt"), "w") as f:
            f.write(f"{statistics.median(times[1:] or times):.6f}\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
