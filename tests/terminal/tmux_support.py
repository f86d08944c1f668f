#!/usr/bin/env python3
"""What the tmux tests of tests/terminal share: a private tmux server whose sessions are shells
the tests type into, screen captures polled until a deadline, PASS/FAIL checks, process states
from /proc, and the run of a list of scenarios with its clean-up. The accel under test is the
first argument of the test script."""
import glob
import os
import re
import shutil
import signal
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


def run_scenarios(title, scenarios, modules=()):
    """Runs each scenario(t, tmp) with one tmux server and one temporary directory, removes both,
    and exits 1 on any failure (77 when tmux, or a Python module of `modules`, (name, Debian
    package) pairs, is missing outside CI)."""
    if not shutil.which("tmux"):
        unavailable("tmux is not installed")
    for module, package in modules:
        if subprocess.run([PYTHON, "-c", f"import {module}"], stderr=subprocess.DEVNULL).returncode != 0:
            unavailable(f"{module} is not installed for {PYTHON} (Debian: {package})")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix="accel-terminal-")
    os.makedirs(os.path.join(tmp, "bin"))
    os.symlink(PYTHON, os.path.join(tmp, "bin", "python3"))
    t = Tmux(tmp)
    start = time.monotonic()
    try:
        for scenario in scenarios:
            scenario(t, tmp)
    finally:
        t.tmux("kill-server")
        try:
            os.unlink(os.path.join("/tmp", f"tmux-{os.getuid()}", t.socket))
        except OSError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{title}: {len(failures)} failure(s) in {time.monotonic() - start:.1f} s")
    sys.exit(1 if failures else 0)
