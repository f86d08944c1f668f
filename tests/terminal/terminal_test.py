#!/usr/bin/env python3
"""accel launch on a real terminal, driven through tmux (CTest `terminal`): a tqdm bar on rank 0
beside rank 1's log lines (and the same job under torchrun, screens shown side by side), a rich
bar (which erases its line before each frame) beside log lines, two
bars at once, colours and the log files without escapes, the width the workers see and its
change on a resize, a debugger's prompt on rank 0, and a launcher in the background.
Each check prints PASS or FAIL; exits 1 on any failure, 77 when tmux (or tqdm, or rich) is missing
outside CI. Every wait polls the screen or a file until a deadline.
Usage: terminal_test.py ACCEL"""
import glob
import os
import re
import socket
import subprocess
import time

from tmux_support import (LAUNCH, PYTHON, check, exit_code, process_states, run_and_exit, run_scenarios,
                          stty)

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


def test_rich(t, tmp):
    """rich redraws its bar with "\\r ESC[2K" before each frame: the erase must not take the prefix."""
    flag, bad = "rich-done", []

    def each(s):
        for line in s:
            if "rich-bar" in line and not line.startswith("[rank 0] "):
                bad.append(f"a bar line without its prefix: {line!r}")
            if "log line" in line and not re.fullmatch(r"\[rank 1\] log line [1-5]", line):
                bad.append(f"a log line not whole: {line!r}")

    t.session("rich")
    final = run_and_exit(t, "rich", f"{LAUNCH} $W rich {flag}", "rich: the job ends", each)
    if final is None:
        return
    check("rich: every line with rank 0's bar starts with its prefix, live and finished; rank 1's lines are whole",
          not bad, bad[:3])
    bars = [line for line in final if "rich-bar" in line]
    check("rich: the final screen shows the finished bar once, with its prefix",
          len(bars) == 1 and bars[0].startswith("[rank 0] ") and "100%" in bars[0], final)
    check("rich: the job exits 0", exit_code(final) == 0, final)


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
    run_scenarios("terminal", (test_bar, test_rich, test_two_bars, test_colour_and_width, test_stdin),
                  modules=(("tqdm", "python3-tqdm"), ("rich", "python3-rich")))


if __name__ == "__main__":
    main()
