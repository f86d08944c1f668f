#!/usr/bin/env python3
"""accel top on a real terminal, driven through tmux (CTest `top`): a job of two machines'
launchers on loopback, machine 0's two ranks drawing tqdm bars (top_worker.py), machine 1's two
running libaccel_runtime's all_reduce loop (runtime_worker reduce-loop, in a group of their own).
The screen shows every rank with its host and pid; the rates move (a bar's it/s, collectives per
second, the throughput's sparkline grows); picking a rank shows its last lines; `q` and Ctrl-C
leave the terminal as it was (stty, the cursor shown, the main screen); a resize redraws within
the new width. --once and --json (through machine 1's launcher, which asks machine 0) checked
field by field, and off a terminal one frame. Prints PASS or FAIL per check; exits 1 on any
failure, 77 when tmux or tqdm is missing outside CI.
Usage: top_test.py ACCEL"""
import json
import os
import re
import socket
import subprocess
import time

from tmux_support import ACCEL, PYTHON, check, exit_code, run_and_exit, run_scenarios, stty

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME_WORKER = os.path.join(os.path.dirname(ACCEL), "runtime_worker")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    """Machine 0 (tqdm ranks 0 and 1) and machine 1 (runtime ranks 2 and 3) on loopback."""

    def __init__(self, tmp):
        self.stop = os.path.join(tmp, f"stop-top-job-{time.monotonic_ns()}")
        port, job_port, group_port = free_port(), free_port(), free_port()
        common = [ACCEL, "launch", "--cpu", "--num_machines", "2", "--num_processes", "4", "--main_process_ip",
                  "127.0.0.1", "--main_process_port", str(port), "--job_port", str(job_port), "--grace_period", "2"]
        env = dict(os.environ, HF_HOME=os.path.join(tmp, "hf"), ACCEL_NVML_LIBRARY=os.path.join(tmp, "none.so"),
                   ACCEL_CUDA_LIBRARY=os.path.join(tmp, "none.so"))
        own_group = (f"RANK=$((RANK-2)) WORLD_SIZE=2 GROUP_RANK=0 NODE_RANK=0 MASTER_PORT={group_port} "
                     f"exec {RUNTIME_WORKER} reduce-loop")
        self.logs = [open(os.path.join(tmp, f"top-machine{m}.log"), "w") for m in (0, 1)]
        self.machines = [
            subprocess.Popen(common + ["--machine_rank", "0", "--python", PYTHON, os.path.join(HERE, "top_worker.py"),
                                       self.stop], stdout=self.logs[0], stderr=subprocess.STDOUT, env=env),
            subprocess.Popen(common + ["--machine_rank", "1", "--no_python", "sh", "-c", own_group],
                             stdout=self.logs[1], stderr=subprocess.STDOUT, env=env)]

    def end(self):
        open(self.stop, "w").close()
        for p in self.machines:
            if p.poll() is None:
                p.terminate()
            p.wait(30)
        for log in self.logs:
            log.close()


def rows(s):
    return {int(m.group(1)): line for line in s for m in [re.match(r"^\s*(\d+) (\S+)\s+(\d+) ", line)] if m}


def throughput(s):
    return next((line for line in s if line.startswith("throughput ")), "")


def modes(stty_a):
    """stty -a without its first line (speed and size: a resize changes those, not the modes)."""
    return stty_a.split("\n", 1)[1]


def terminal_state(t, name):
    r = t.tmux("display-message", "-p", "-t", name, "#{cursor_flag} #{alternate_on}")
    return r.stdout.decode().strip()


def test_screen(t, tmp, job):
    name = "top"
    t.session(name)
    before = stty(t, name, 1)
    state_before = terminal_state(t, name)
    t.type(name, f"$A top {job.machines[0].pid}; echo EXIT=$?")
    s = t.wait(name, lambda s: len(rows(s)) == 4 and "it/s" in "".join(s) and "c/s" in "".join(s),
               "every rank on the screen with its rate", seconds=30)
    if s is None:
        return
    check("the screen names the job's round, world and machines",
          any("world 4  machines 2" in line for line in s), s)
    check("ranks 0 and 1 show their bars' it/s, ranks 2 and 3 collectives per second",
          t.wait(name, lambda s: len(rows(s)) == 4 and all("it/s" in rows(s)[r] for r in (0, 1)) and
                 all("c/s" in rows(s)[r] for r in (2, 3)), "the ranks' rates") is not None)
    check("ranks 2 and 3 are seen in an all_reduce",
          t.wait(name, lambda s: len(rows(s)) == 4 and all("all_reduce" in rows(s)[r] for r in (2, 3)),
                 "ranks 2 and 3 in an all_reduce") is not None)
    first = throughput(s)
    later = t.wait(name, lambda x: len(throughput(x).split(" ")) > 3 and throughput(x) != first,
                   "the throughput line moves", seconds=10)
    check("the throughput's sparkline grows", later is not None and
          len(throughput(later)) >= len(first), [first, throughput(later or [])])
    check("every line fits the 100 columns", all(len(line) <= 100 for line in s), s)
    t.tmux("send-keys", "-t", name, "j")
    t.tmux("send-keys", "-t", name, "Enter")
    s = t.wait(name, lambda s: any("rank 1's last lines" in line for line in s) and
               any(re.search(r"rank 1 line \d+", line) for line in s), "picking rank 1 shows its lines")
    check("picking rank 1 shows its last lines", s is not None, s)
    t.tmux("resize-window", "-t", name, "-x", "80", "-y", "20")
    s = t.wait(name, lambda s: any(line.lstrip().startswith("RANK") and "RSS" in line for line in s),
               "redrawn at 80 columns")
    check("at 80 columns every column fits, RSS last", s is not None and all(len(line) <= 80 for line in s), s)
    t.tmux("send-keys", "-t", name, "q")
    s = t.wait(name, lambda s: exit_code(s) is not None, "q ends accel top")
    check("q exits 0", s is not None and exit_code(s) == 0, s)
    after = modes(stty(t, name, 2))
    check("after q: the terminal's modes as before", after == modes(before), [before, after])
    check(f"after q: the cursor shown and the main screen ({terminal_state(t, name)})",
          terminal_state(t, name) == state_before)
    t.type(name, "clear")
    t.type(name, f"$A top {job.machines[1].pid}; echo EXIT=$?")
    t.wait(name, lambda s: len(rows(s)) == 4, "accel top through machine 1's launcher", seconds=30)
    t.tmux("send-keys", "-t", name, "C-c")
    s = t.wait(name, lambda s: exit_code(s) is not None, "Ctrl-C ends accel top")
    check("Ctrl-C exits 130", s is not None and exit_code(s) == 130, s)
    check("after Ctrl-C: the terminal's modes as before", modes(stty(t, name, 3)) == modes(before))
    check("after Ctrl-C: the cursor shown and the main screen", terminal_state(t, name) == state_before)


def test_once_and_json(t, tmp, job):
    once = subprocess.run([ACCEL, "top", "--once", str(job.machines[1].pid)], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, COLUMNS="100"))
    lines = once.stdout.splitlines()
    check("--once: exit 0 and one frame with every rank", once.returncode == 0 and len(rows(lines)) == 4,
          once.stdout + once.stderr)
    check("--once: no keys line, every line within 100 columns",
          not any(line.startswith("q quit") for line in lines) and all(len(line) <= 100 for line in lines), lines)
    piped = subprocess.run(f"{ACCEL} top {job.machines[0].pid} | cat", shell=True, capture_output=True, text=True,
                           timeout=60)
    check("off a terminal: one frame, exit 0", piped.returncode == 0 and len(rows(piped.stdout.splitlines())) == 4,
          piped.stdout + piped.stderr)
    out = subprocess.run([ACCEL, "top", "--json", str(job.machines[1].pid)], capture_output=True, text=True,
                         timeout=60)
    try:
        j = json.loads(out.stdout)
    except ValueError:
        check("--json prints one JSON object", False, out.stdout + out.stderr)
        return
    check("--json: the job's world, machines and round", (j["world_size"], j["machines"], j["round"]) == (4, 2, 0), j)
    check("--json: two hosts, machines 0 and 1", [h["machine"] for h in j["hosts"]] == [0, 1], j["hosts"])
    ranks = {r["rank"]: r for r in j["ranks"]}
    check("--json: ranks 0 to 3, on machines 0, 0, 1, 1",
          sorted(ranks) == [0, 1, 2, 3] and [ranks[r]["machine"] for r in range(4)] == [0, 0, 1, 1], j["ranks"])
    check("--json: every rank running, with a pid, memory and a CPU share",
          all(r["state"] == "running" and r["pid"] > 0 and r["resident_bytes"] > 0 and r["cpu_percent"] is not None
              for r in ranks.values()), j["ranks"])
    check("--json: the bars' rate on ranks 0 and 1",
          all(re.fullmatch(r"[0-9.]+(it/s|s/it)", ranks[r]["progress_rate"]) for r in (0, 1)), j["ranks"])
    check("--json: collectives per second on ranks 2 and 3, in an all_reduce",
          all(ranks[r]["collectives_per_second"] > 0 and ranks[r]["collective"].startswith("all_reduce")
              for r in (2, 3)), j["ranks"])
    check("--json: seconds since output are known for every rank",
          all(r["seconds_since_output"] is not None for r in ranks.values()), j["ranks"])
    check("--json: the throughput in collectives/s", j["throughput"] > 0 and
          j["throughput_unit"] == "collectives/s", j)


def with_job(scenario):
    def run(t, tmp):
        job = Job(tmp)
        try:
            deadline = time.monotonic() + 30
            # Ready once machine 0's view holds all 4 ranks: machine 1's status comes a second
            # after its workers start.
            while time.monotonic() < deadline:
                ready = subprocess.run([ACCEL, "top", "--json", str(job.machines[0].pid)], capture_output=True,
                                       text=True, timeout=60)
                if ready.returncode == 0 and len(json.loads(ready.stdout)["ranks"]) == 4:
                    break
                time.sleep(0.5)
            scenario(t, tmp, job)
        finally:
            job.end()
    return run


run_scenarios("top", [with_job(test_once_and_json), with_job(test_screen)], modules=[("tqdm", "python3-tqdm")])
