#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# flight_worker.py MODE - a torch.distributed program over Gloo for check_flight.py: five
# all_reduces on every rank, then by MODE: hang (the last rank never enters the sixth; it loops),
# mismatch (the last rank calls all_gather where the others call all_reduce), healthy (a sixth
# all_reduce; prints what its own sitecustomize left in USER_SITE_RAN and the sum, meets the others
# at a barrier, and rank 0 exits 3: an exit code and output the launcher must not change). bench,
# for scripts/bench_flight: no faults, the median time of a 4 KiB all_reduce on each rank.
# slow RANK MS STEPS: STEPS all_reduces, each after 10 ms of "work", rank RANK (-1: none) MS ms
# later to each (a straggler for the launcher to name); prints "done".
import os
import sys
import time

import torch
import torch.distributed as dist

mode = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
if mode == "bench":  # scripts/bench_flight: a 4 KiB all_reduce's median time, this rank's
    t = torch.ones(1024)
    times = []
    for i in range(3000):
        start = time.perf_counter()
        dist.all_reduce(t)
        if i >= 500:
            times.append(time.perf_counter() - start)
    times.sort()
    print(f"rank {rank} all_reduce_4k_us={times[len(times) // 2] * 1e6:.2f}", flush=True)
    dist.destroy_process_group()
    sys.exit(0)
if mode == "slow":
    slow, late, steps = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    t = torch.ones(1024)
    for _ in range(steps):
        time.sleep(0.01 + (late / 1000 if rank == slow else 0))
        dist.all_reduce(t)
    print("done", flush=True)
    dist.destroy_process_group()
    sys.exit(0)
t = torch.ones(10)
for _ in range(5):
    dist.all_reduce(t)
print(f"rank {rank} did 5", flush=True)
last = rank == world - 1
if mode == "hang" and last:
    while True:
        time.sleep(0.1)
if mode == "mismatch" and last:
    dist.all_gather([torch.zeros(10) for _ in range(world)], t)
else:
    dist.all_reduce(t)
print(f"rank {rank} site={os.environ.get('USER_SITE_RAN', 'no')} sum={t[0].item():g}", flush=True)
dist.barrier()  # every rank has printed before rank 0 ends the job with its code
dist.destroy_process_group()
sys.exit(3 if mode == "healthy" and rank == 0 else 0)
