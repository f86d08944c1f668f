# SPDX-License-Identifier: Apache-2.0
# hang_worker.py - a job that hangs the usual way, for check_stacks.py: rank 1 never leaves its
# loop, so rank 0 waits in dist.all_reduce for it. Each says "ready" first. Until then it says
# "starting" every second, so that a slow import of torch on a loaded machine is not taken for
# the hang that --hang_timeout is checked on.
import threading
import time

ready = threading.Event()


def starting():
    while not ready.wait(1):
        print("starting", flush=True)


threading.Thread(target=starting, daemon=True).start()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def spin():
    while True:
        time.sleep(0.05)


def step():
    t = torch.ones(4)
    dist.all_reduce(t)


dist.init_process_group("gloo")
ready.set()
print(f"rank {dist.get_rank()} ready", flush=True)
if dist.get_rank() == 1:
    spin()
step()
