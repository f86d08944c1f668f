"""The tqdm ranks of top_test.py: a bar of many 0.05 s steps, and every second a line
"rank R line K", until FILE exists (or 120 s pass). Usage: top_worker.py FILE"""
import os
import sys
import time

from tqdm import tqdm

rank = int(os.environ["RANK"])
stop = sys.argv[1]
start = time.monotonic()
with tqdm(total=100000, mininterval=0.1) as bar:
    k = 0
    while not os.path.exists(stop) and time.monotonic() - start < 120:
        time.sleep(0.05)
        bar.update(1)
        if bar.n % 20 == 0:
            k += 1
            tqdm.write(f"rank {rank} line {k}")
