#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# ddp_gloo.py - a real PyTorch DDP job on CPU (Gloo over loopback), for `accel launch` tests.
# Written for Debian's python3-torch 1.13 (/usr/bin/python3).
#
# Checks, on every rank:
#   - RANK / WORLD_SIZE / LOCAL_RANK (set by the launcher) agree with torch.distributed;
#   - DistributedDataParallel(Linear(4, 2)): after one forward/backward on rank-dependent input
#     the gradients are identical on all ranks and equal to the mean of the per-rank gradients
#     computed without DDP;
#   - all_reduce(SUM) of [rank + 1] == world_size * (world_size + 1) / 2;
#   - a barrier.
# Rank 0 then prints `ddp_gloo ok world_size=N`. Exit 0 on success, 1 (with a message naming
# the rank and the check) on any failed check.
#
# By hand, without a launcher:
#   MASTER_ADDR=127.0.0.1 MASTER_PORT=29655 WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 python3 ddp_gloo.py &
#   MASTER_ADDR=127.0.0.1 MASTER_PORT=29655 WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 python3 ddp_gloo.py
import os
import sys

os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

RANK = "?"


def check(cond, what):
    if not cond:
        print(f"ddp_gloo: rank {RANK}: FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)


def env_int(name):
    value = os.environ.get(name)
    check(value is not None, f"environment variable {name} is not set")
    try:
        return int(value)
    except ValueError:
        check(False, f"{name}={value!r} is not an integer")


def make_model():
    torch.manual_seed(1234)  # same initial weights on every rank and for the reference
    return torch.nn.Linear(4, 2)


def rank_input(rank):
    # Rank-dependent batch, so that per-rank gradients differ and averaging is observable.
    return torch.arange(12, dtype=torch.float32).reshape(3, 4) * (rank + 1) / 10.0


def grads_without_ddp(rank):
    model = make_model()
    model(rank_input(rank)).pow(2).sum().backward()
    return torch.cat([p.grad.flatten() for p in model.parameters()])


def main():
    global RANK
    env_rank, env_world, env_local = env_int("RANK"), env_int("WORLD_SIZE"), env_int("LOCAL_RANK")
    RANK = env_rank
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    check(rank == env_rank, f"dist.get_rank()={rank} but RANK={env_rank}")
    check(world == env_world, f"dist.get_world_size()={world} but WORLD_SIZE={env_world}")
    check(0 <= env_local < world, f"LOCAL_RANK={env_local} not in [0, {world})")
    if "LOCAL_WORLD_SIZE" in os.environ:
        local_world = env_int("LOCAL_WORLD_SIZE")
        check(0 <= env_local < local_world <= world,
              f"LOCAL_RANK={env_local}, LOCAL_WORLD_SIZE={local_world}, WORLD_SIZE={world}")

    # DDP: one forward/backward; gradients are averaged across ranks during backward.
    ddp = DistributedDataParallel(make_model())
    ddp(rank_input(rank)).pow(2).sum().backward()
    grads = torch.cat([p.grad.flatten() for p in ddp.module.parameters()])

    gathered = [torch.empty_like(grads) for _ in range(world)]
    dist.all_gather(gathered, grads)
    for r, g in enumerate(gathered):
        check(torch.equal(g, grads), f"DDP gradients differ between rank {rank} and rank {r}: "
                                     f"{grads.tolist()} vs {g.tolist()}")
    expected = torch.stack([grads_without_ddp(r) for r in range(world)]).mean(dim=0)
    check(torch.allclose(grads, expected, rtol=1e-5, atol=1e-6),
          f"DDP gradients {grads.tolist()} != mean of per-rank gradients {expected.tolist()}")

    t = torch.tensor([rank + 1.0])
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    want = world * (world + 1) / 2
    check(t.item() == want, f"all_reduce SUM gave {t.item()}, expected {want}")

    dist.barrier()
    if rank == 0:
        print(f"ddp_gloo ok world_size={world}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
