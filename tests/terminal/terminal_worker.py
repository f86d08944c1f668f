"""The worker programs of terminal_test.py, one per mode: terminal_worker.py MODE [FILE].
Every mode reads RANK (accel and torchrun both export it) and waits on files, never on time,
for what another rank or the test must have done first (each wait gives up after 20 s).
  bar FILE    rank 0: a tqdm bar of 50 steps of 0.1 s, closed once rank 1 made FILE;
              rank 1: "log line K" for K = 1..5, one a second, then makes FILE
  rich FILE   rank 0: a rich progress bar of 30 steps of 0.1 s ("rich-bar"), ended once rank 1
              made FILE; rank 1: "log line K" for K = 1..3, one a second, then makes FILE
  bars DIR    every rank: a tqdm bar of 30 steps of 0.1 s, closed once every rank's bar is full
  colour      rank 0: whether stdout is a terminal, then a red word when it is
  width       rank 0: its terminal's columns, then the new columns after a resize (and whether
              a SIGWINCH came)
  pdb         rank 0: breakpoint() with x = 41, then "after breakpoint 41"
  stdin FILE  rank 0: what it read from stdin until EOF and whether stdin is a terminal; exits
              once FILE exists"""
import os
import signal
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
mode = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else ""


def wait_for(*paths):
    deadline = time.monotonic() + 20
    while not all(os.path.exists(p) for p in paths) and time.monotonic() < deadline:
        time.sleep(0.02)


def touch(path):
    with open(path, "w"):
        pass


if mode == "bar":
    if rank == 0:
        from tqdm import tqdm
        bar = tqdm(total=50)
        for _ in range(50):
            time.sleep(0.1)
            bar.update(1)
        wait_for(arg)
        bar.close()
    elif rank == 1:
        for k in range(1, 6):
            time.sleep(0.5 if k == 1 else 1)
            print(f"log line {k}", flush=True)
        touch(arg)
elif mode == "rich":
    if rank == 0:
        from rich.progress import Progress
        with Progress() as progress:
            task = progress.add_task("rich-bar", total=30)
            for _ in range(30):
                time.sleep(0.1)
                progress.advance(task)
            wait_for(arg)
    elif rank == 1:
        for k in range(1, 4):
            time.sleep(0.5 if k == 1 else 1)
            print(f"log line {k}", flush=True)
        touch(arg)
elif mode == "bars":
    from tqdm import tqdm
    bar = tqdm(total=30)
    for _ in range(30):
        time.sleep(0.1)
        bar.update(1)
    touch(os.path.join(arg, f"full-{rank}"))
    wait_for(*(os.path.join(arg, f"full-{r}") for r in range(world)))
    bar.close()
elif mode == "colour" and rank == 0:
    print("isatty", sys.stdout.isatty(), flush=True)
    if sys.stdout.isatty():
        print("\x1b[31mred\x1b[0m and plain", flush=True)
elif mode == "width" and rank == 0:
    winched = []
    signal.signal(signal.SIGWINCH, lambda *_: winched.append(True))
    first = os.get_terminal_size(1).columns
    print("cols", first, flush=True)
    now, deadline = first, time.monotonic() + 20
    while now == first and time.monotonic() < deadline:
        time.sleep(0.02)
        now = os.get_terminal_size(1).columns
    deadline = time.monotonic() + 2
    while not winched and time.monotonic() < deadline:
        time.sleep(0.02)
    print("cols", now, "winch", bool(winched), flush=True)
elif mode == "pdb" and rank == 0:
    x = 41
    breakpoint()
    print("after breakpoint", x, flush=True)
elif mode == "stdin" and rank == 0:
    data = sys.stdin.read()
    print("read", repr(data), "isatty", os.isatty(0), flush=True)
    wait_for(arg)
