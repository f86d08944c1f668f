#!/usr/bin/env python3
"""checkpoint_worker.py DIR: a worker of slurm_test.sh's signal checks (signal_checks.sh), started
by `accel launch`. Like a training script answering SLURM's warning before a time limit
(sbatch --signal=USR1@60), its SIGUSR1 handler writes DIR/ckpt.<RANK> (its last checkpoint: rank,
host, time) and the worker then ends with 0. DIR/ready.<RANK> says the handler is installed.
Without the signal it gives up after 110 s with exit code 3."""
import os
import signal
import socket
import sys
import time

out, rank = sys.argv[1], os.environ["RANK"]
got = []


def on_usr1(signum, frame):
    # SLURM signals every process of the step and the launcher forwards it too: it may come twice.
    if not got:
        got.append(time.time())
        with open(f"{out}/ckpt.{rank}", "w") as f:
            f.write(f"checkpoint of rank {rank} on {socket.gethostname()} at {got[0]:.3f}\n")


signal.signal(signal.SIGUSR1, on_usr1)
open(f"{out}/ready.{rank}", "w").close()
deadline = time.monotonic() + 110
while not got and time.monotonic() < deadline:
    time.sleep(0.1)
# The signal's second copy may still be on its way (SLURM's and the launcher's): at exit Python
# gives SIGUSR1 back its default action, which would kill the worker, so it is ignored from here.
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
sys.exit(0 if got else 3)
