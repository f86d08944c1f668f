# SPDX-License-Identifier: Apache-2.0
# A worker of scripts/bench_elastic: says when it started and in which world, then all-reduces a
# small tensor over Gloo every 50 ms until it is stopped, as a training step loop would; under
# torchrun, a peer that vanished makes one of these fail, which is how torchrun learns of it.
import os
import sys
import time

print(f"start {time.time():.6f} world={os.environ['WORLD_SIZE']} rank={os.environ['RANK']} "
      f"restarts={os.environ.get('TORCHELASTIC_RESTART_COUNT', '?')} master={os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}", flush=True)
import torch  # noqa: E402  (after the line: the start is the process's, not torch's import)
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
t = torch.ones(16)
steps = 0
while True:
    dist.all_reduce(t)
    steps += 1
    if steps % 20 == 0:
        print(f"steps {steps}", flush=True)
    time.sleep(0.05)
sys.exit(0)
