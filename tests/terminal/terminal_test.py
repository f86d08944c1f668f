#!/usr/bin/env python3
"""accel launch on a real terminal, driven through tmux (CTest `terminal`): a tqdm bar on rank 0
beside rank 1's log lines (and the same job under torchrun, screens shown side by side), two
bars at once, colours and the log files without escapes, the width the workers see and its
change on a resize, a debugger's prompt on rank 0, and a launcher in the background.
Each check prints PASS or FAIL; exits 1 on any failure, 77 when tmux (or tqdm) is missing
outside CI. Every wait polls the screen or a file until a deadline.
Usage: terminal_test.py ACCEL"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ACCEL = os.path.abspath(sys.argv[1])
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "terminal_worker.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
LAUNCH = "$A launch --cpu --num_processes 2 --main_process_port 0"
sys.stdout.reconfigure(errors="replace")
failures = []


def check(name, ok, screen=None):
    print(("PASS: " if ok else "FAIL: ") + name, flush=True)
    if not ok:
        failures.append(name)
        while screen and not screen[-1]:
            screen = screen[:-1]
        if screen is not None:
            print("  the screen:\n" + "\n".join("  | " + line for line in screen), flush=True)
    return ok


def unavailable(what):
    if os.environ.get("CI") == "true":
        check(what + " (required when CI=true)", False)
        sys.exit(1)
    print(f"SKIP: {what}")
    sys.exit(77)


class Tmux:
    """A private tmux server (its own socket); one session, i.e. one shell, per scenario."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.socket = f"accel-terminal-{os.getpid()}-{os.path.basename(tmp)}"
        self.env = {"HOME": tmp, "XDG_CACHE_HOME": os.path.join(tmp, ".cache"), "LANG": "C.UTF-8",
                    "PATH": os.path.join(tmp, "bin") + ":/usr/local/bin:/usr/bin:/bin", "TERM": "xterm-256color",
                    "HISTFILE": ""}

    def tmux(self, *args):
        return subprocess.run(["tmux", "-u", "-L", self.socket, "-f", "/dev/null", *args], env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)

    def session(self, name):
        r = self.tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "20", "-c", self.tmp,
                      "bash --norc --noprofile -i")
        if r.returncode != 0:
            raise RuntimeError(f"tmux new-session: {r.stderr.decode(errors='replace')}")
        self.tmux("set-option", "-t", name, "window-size", "manual")
        self.type(name, f"A={ACCEL}; W={WORKER}; PS1='$ '; clear; echo READY")
        self.wait(name, lambda s: "READY" in s, "the shell starts")

    def type(self, name, text):
        self.tmux("send-keys", "-t", name, "-l", text)
        self.tmux("send-keys", "-t", name, "Enter")

    def screen(self, name, escapes=False):
        r = self.tmux("capture-pane", "-p", "-t", name, *(["-e"] if escapes else []))
        return [line.rstrip() for line in r.stdout.decode("utf-8", errors="replace").split("\n")]

    def wait(self, name, done, what, seconds=20, each=None, escapes=False):
        """Polls the screen about every 0.1 s (each(screen) sees every capture) until done(screen);
        returns that screen, or None after a FAIL that shows the last one."""
        deadline = time.monotonic() + seconds
        while True:
            s = self.screen(name, escapes)
            if each:
                each(s)
            if done(s):
                return s
            if time.monotonic() > deadline:
                check(f"{what} within {seconds} s", False, s)
                return None
            time.sleep(0.1)


def exit_code(s):
    codes = [int(m.group(1)) for line in s for m in [re.fullmatch(r"EXIT=(\d+)", line)] if m]
    return codes[-1] if codes else None


def run_and_exit(t, name, command, what, each=None, escapes=False, seconds=20):
    t.type(name, command + "; echo EXIT=$?")
    return t.wait(name, lambda s: exit_code(s) is not None, what, seconds, each, escapes)


BAR = re.compile(r"(\d+)%\|.*?\| *(\d+)/(\d+) \[")


def bar_rows(s, prefix=""):
    return [(i, m) for i, line in enumerate(s) for m in [BAR.search(line)]
            if m and line.startswith(prefix)]


def bar_and_logs(t, tmp, label, command):
    """Runs the bar job; returns (final screen, distinct frames seen)."""
    flag = f"logs-done-{label}"
    frames, bad = set(), []
    prefix = "[rank 0] " if label == "accel" else ""

    def each(s):
        bars = bar_rows(s, prefix)
        for _, m in bars:
            frames.add(m.group(2))
        if label != "accel":
            return
        if len(bars) > 1:
            bad.append(f"{len(bars)} bars on one screen, not one redrawn in place: {s}")
        logs = [i for i, line in enumerate(s) if "log line" in line]
        bad.extend(s[i] for i in logs if not re.fullmatch(r"\[rank 1\] log line [1-5]", s[i]))
        if bars and logs and max(logs) > bars[-1][0] and bars[-1][1].group(2) != "50":
            bad.append(f"a log line below the live bar: {s}")

    t.session(label)
    final = run_and_exit(t, label, f"{command} $W bar {flag}", f"{label}: the bar job ends", each)
    if label == "accel":
        check("accel: one bar, redrawn in place; every rank-1 log line on screen is whole and above it",
              not bad, bad[:3])
    return final, len(frames)


def test_bar(t, tmp):
    final, frames = bar_and_logs(t, tmp, "accel", LAUNCH)
    if final is None:
        return
    check(f"accel: at least 5 distinct bar frames on screen during the run ({frames} seen)", frames >= 5)
    bars = bar_rows(final)
    check("accel: the final screen shows the bar exactly once, at 100% (50/50)",
          len(bars) == 1 and bars[0][1].group(1) == "100" and bars[0][1].group(2) == "50"
          and final[bars[0][0]].startswith("[rank 0] "), final)
    logs = [line for line in final if "log line" in line]
    check("accel: the final screen has rank 1's five log lines, whole, in order, above the bar",
          logs == [f"[rank 1] log line {k}" for k in range(1, 6)]
          and bool(bars) and max(i for i, line in enumerate(final) if "log line" in line) < bars[0][0], final)
    check("accel: the bar job exits 0", exit_code(final) == 0, final)

    if subprocess.run([PYTHON, "-c", "import importlib.util, sys; sys.exit(not importlib.util.find_spec('torch'))"]
                      ).returncode != 0:
        if os.environ.get("CI") == "true":
            check("torchrun: torch is importable by " + PYTHON + " (required when CI=true)", False)
        else:
            print(f"NOTE: {PYTHON} has no torch: the torchrun comparison is skipped")
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # torchrun's defaults for --redirects and --tee ("0") fail to parse with Debian's torch on
    # Debian's Python (iterating its IntFlag skips the member that is 0); a map that names only a
    # local rank the job does not have gives both ranks that default: the terminal itself.
    torchrun = (f"python3 -m torch.distributed.run --nproc_per_node 2 --master_port {port} "
                "--redirects 9:0 --tee 9:0")
    tfinal, tframes = bar_and_logs(t, tmp, "torchrun", torchrun)
    if tfinal is None:
        return
    check("torchrun: the bar job exits 0", exit_code(tfinal) == 0, tfinal)
    print(f"distinct bar frames seen: accel {frames}, torchrun {tframes}")
    print(f"{'final screen under accel':<100} | final screen under torchrun")
    for a, b in zip(final, tfinal):
        print(f"{a:<100} | {b}")


def test_two_bars(t, tmp):
    os.makedirs(os.path.join(tmp, "bars"))
    both, wrong = [], []

    def each(s):
        r0, r1 = bar_rows(s, "[rank 0] "), bar_rows(s, "[rank 1] ")
        if len(r0) > 1 or len(r1) > 1:
            wrong.append(s)
        if r0 and r1 and exit_code(s) is None:
            both.append(r0[-1][0] < r1[-1][0])
            if r0[-1][1].group(2) != "30" and r1[-1][1].group(2) != "30" and r0[-1][0] > r1[-1][0]:
                wrong.append(s)

    t.session("bars")
    final = run_and_exit(t, "bars", f"{LAUNCH} $W bars bars", "two bars: the job ends", each)
    if final is None:
        return
    check("two bars: both ranks' live lines on screen at once, rank 0 above rank 1", any(both))
    check("two bars: one line per bar, and whenever both run rank 0's is above rank 1's", not wrong,
          wrong[0] if wrong else None)
    ends = [m.group(0) for _, m in bar_rows(final)]
    check("two bars: the final screen shows each bar once, full",
          len(ends) == 2 and all(e.startswith("100%") and "30/30" in e for e in ends)
          and len(bar_rows(final, "[rank 0] ")) == 1 and len(bar_rows(final, "[rank 1] ")) == 1, final)
    check("two bars: the job exits 0", exit_code(final) == 0, final)


def test_colour_and_width(t, tmp):
    t.session("colour")
    final = run_and_exit(t, "colour", f"{LAUNCH} --log_dir logs $W colour", "colour: the job ends", escapes=True)
    if final is None:
        return
    plain = t.screen("colour")
    check("colour: the worker's stdout is a terminal", "[rank 0] isatty True" in plain, plain)
    check("colour: the escape sequences reach the terminal",
          any(re.search(r"\x1b\[(?:[0-9;]*;)?31(?:;[0-9;]*)?mred", line) for line in final), final)
    logs = {p: open(p, "rb").read() for p in glob.glob(os.path.join(tmp, "logs", "**", "*stdout*"), recursive=True)
            if os.path.isfile(p)}
    rank0 = [data for data in logs.values() if b"isatty True" in data]
    check("colour: --log_dir has rank 0's stdout with 'red' and no escape sequence",
          len(rank0) == 1 and b"red and plain" in rank0[0] and not any(b"\x1b" in d for d in logs.values()),
          [f"{p}: {d!r}" for p, d in logs.items()] or ["(no *stdout* file under logs/)"])
    check("colour: the job exits 0", exit_code(final) == 0, final)

    t.session("width")
    t.type("width", f"{LAUNCH} $W width; echo EXIT=$?")
    first = t.wait("width", lambda s: any(line.startswith("[rank 0] cols") for line in s), "width: the first width")
    if first is None:
        return
    want = 100 - len("[rank 0] ")
    check(f"width: the worker's terminal is {want} columns wide", f"[rank 0] cols {want}" in first, first)
    t.tmux("resize-window", "-t", "width", "-x", "120")
    want = 120 - len("[rank 0] ")
    final = t.wait("width", lambda s: exit_code(s) is not None, f"width: the worker reports {want} columns after the resize to 120, and the job ends")
    if final is None:
        return
    check(f"width: after the resize to 120 columns the worker's terminal is {want} wide, with a SIGWINCH",
          f"[rank 0] cols {want} winch True" in final, final)
    check("width: the job exits 0", exit_code(final) == 0, final)


def process_states(pid):
    """The state letters of pid and its descendants."""
    states, parents = {}, {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = open(stat).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        p = int(stat.split("/")[2])
        states[p], parents[p] = fields[0], int(fields[1])
    tree, todo = {}, [pid]
    while todo:
        p = todo.pop()
        if p in states:
            tree[p] = states[p]
            todo.extend(c for c, parent in parents.items() if parent == p)
    return tree


def stty(t, name, n):
    t.type(name, f"stty -a > stty-{n}; echo STTY-{n}")
    t.wait(name, lambda s: f"STTY-{n}" in s, f"stty -a number {n}")
    with open(os.path.join(t.tmp, f"stty-{n}")) as f:
        return f.read()


def test_stdin(t, tmp):
    t.session("pdb")
    before = stty(t, "pdb", 0)
    t.type("pdb", f"{LAUNCH} $W pdb; echo EXIT=$?")
    s = t.wait("pdb", lambda s: "[rank 0] (Pdb)" in s, "pdb: the prompt")
    if s is None:
        return
    t.type("pdb", "p x")
    s = t.wait("pdb", lambda s: "[rank 0] 41" in s, "pdb: the value of x")
    check("pdb: 'p x' is echoed on rank 0's prompt and prints 41",
          s is not None and "[rank 0] (Pdb) p x" in s, s)
    t.type("pdb", "c")
    final = t.wait("pdb", lambda s: exit_code(s) is not None, "pdb: the job ends after 'c'")
    if final is None:
        return
    check("pdb: the job continues and exits 0", "[rank 0] after breakpoint 41" in final and exit_code(final) == 0,
          final)
    check("pdb: stty -a is the same before and after", stty(t, "pdb", 1) == before)

    t.session("background")
    before = stty(t, "background", 2)
    t.type("background", f"{LAUNCH} $W stdin stdin-go & echo PID=$!")
    s = t.wait("background", lambda s: any(line.startswith("[rank 0] read") for line in s) and
               any(re.fullmatch(r"PID=\d+", line) for line in s), "background: rank 0 reads stdin")
    if s is None:
        return
    pid = int(next(line for line in s if re.fullmatch(r"PID=\d+", line))[4:])
    check("background: rank 0 reads EOF at once from a stdin that is no terminal",
          "[rank 0] read '' isatty False" in s, s)
    during = stty(t, "background", 3)
    states = process_states(pid)
    check(f"background: the launcher and its workers keep running (states {states})",
          len(states) >= 2 and "T" not in states.values() and "t" not in states.values())
    with open(os.path.join(tmp, "stdin-go"), "w"):
        pass
    t.type("background", f"wait {pid}; echo EXIT=$?")
    final = t.wait("background", lambda s: exit_code(s) is not None, "background: the job ends")
    check("background: the job exits 0", final is not None and exit_code(final) == 0, final)
    check("background: stty -a is the same before, during and after",
          before == during == stty(t, "background", 4))


def main():
    if not shutil.which("tmux"):
        unavailable("tmux is not installed")
    if subprocess.run([PYTHON, "-c", "import tqdm"], stderr=subprocess.DEVNULL).returncode != 0:
        unavailable(f"tqdm is not installed for {PYTHON} (Debian: python3-tqdm)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix="accel-terminal-")
    os.makedirs(os.path.join(tmp, "bin"))
    os.symlink(PYTHON, os.path.join(tmp, "bin", "python3"))
    t = Tmux(tmp)
    start = time.monotonic()
    try:
        for test in (test_bar, test_two_bars, test_colour_and_width, test_stdin):
            test(t, tmp)
    finally:
        t.tmux("kill-server")
        try:
            os.unlink(os.path.join("/tmp", f"tmux-{os.getuid()}", t.socket))
        except OSError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"terminal: {len(failures)} failure(s) in {time.monotonic() - start:.1f} s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
