#!/usr/bin/env python3
"""Ctrl-Z and `fg` on a real terminal, driven through tmux (CTest `job_control`): accel-train
stopped mid-run for longer than twice both --collective_timeout and --heartbeat_timeout, on one
machine and on two emulated machines (two launchers on loopback, machine 1 outside the
terminal): while stopped every worker of the job is in state T, after `fg` every one runs again,
and the job ends with the same weights CRC as the same job never stopped.
Each check prints PASS or FAIL; exits 1 on any failure, 77 when tmux is missing outside CI.
Usage: job_control_test.py ACCEL ACCEL_TRAIN"""
import os
import re
import socket
import subprocess
import sys
import time

from tmux_support import check, exit_code, process_states, run_scenarios

ACCEL, TRAIN = (os.path.abspath(a) for a in sys.argv[1:3])
TIMEOUTS = 1  # --collective_timeout and --heartbeat_timeout, seconds
STOPPED = 3  # seconds the job stays stopped: more than twice both timeouts
# Several seconds of training on one machine (so that a loaded machine still presses Ctrl-Z before
# the end), and over loopback Gloo; fewer where the build is a
# sanitizer's (ACCEL_TEST_QUICK=1), whose accel-train is ten times slower.
STEPS = {1: 1000, 2: 400} if os.environ.get("ACCEL_TEST_QUICK") == "1" else {1: 30000, 2: 6000}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(extra, machines):
    return [ACCEL, "launch", "--cpu", "--collective_timeout", str(TIMEOUTS), "--heartbeat_timeout", str(TIMEOUTS),
            *extra, TRAIN, "--steps", str(STEPS[machines]), "--log_every", str(STEPS[machines] // 20)]


def two_machines(k, port, job_port):
    return launch(["--num_machines", "2", "--machine_rank", str(k), "--num_processes", "2", "--main_process_ip",
                   "127.0.0.1", "--main_process_port", str(port), "--job_port", str(job_port)], 2)


def machine_env(t, k):
    return {**t.env, "ACCEL_HOST_ID": f"machine-{k}", "GLOO_SOCKET_IFNAME": "lo"}


def crc(text):
    found = re.findall(r"weights crc32 ([0-9a-f]{8})", text)
    return found[-1] if found else None


def trainers(pid):
    """The states of the accel-train processes under pid."""
    return {p: s for p, s in process_states(pid).items() if os.path.basename(_exe(p)) == os.path.basename(TRAIN)}


def _exe(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def wait_for(condition, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def stop_and_continue(t, name, roots, label):
    """Ctrl-Z once the job trains; every trainer under `roots` (2 in all) is in T for STOPPED s,
    then runs."""
    s = t.wait(name, lambda s: any("[" in line and "rank 0" in line for line in s), f"{label}: training starts", 30)
    if s is None:
        return False
    t.tmux("send-keys", "-t", name, "C-z")
    t.wait(name, lambda s: any("Stopped" in line for line in s), f"{label}: the shell reports the job stopped")

    def all_trainers():
        states = {}
        for root in roots:
            states.update(trainers(root))
        return states

    stopped = wait_for(lambda: (lambda st: st if len(st) == 2 and set(st.values()) == {"T"} else None)(
        all_trainers()), 10)
    check(f"{label}: every worker is stopped (state T) after Ctrl-Z ({all_trainers()})", stopped is not None)
    time.sleep(STOPPED)
    states = all_trainers()
    check(f"{label}: still stopped after {STOPPED} s ({states})", bool(states) and set(states.values()) == {"T"})
    t.type(name, "fg; echo EXIT=$?")
    running = wait_for(lambda: (lambda st: st if st and "T" not in st.values() else None)(all_trainers()), 10)
    check(f"{label}: every worker runs again after fg ({running})", running is not None)
    return True


def test_one_machine(t, tmp):
    command = launch(["--num_processes", "2", "--main_process_port", "0"], 1)
    reference = subprocess.run(command, env=t.env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=120).stdout.decode(errors="replace")
    t.session("one")
    pane = int(t.tmux("display-message", "-p", "-t", "one", "#{pane_pid}").stdout.decode().strip())
    t.type("one", " ".join(command))
    if not stop_and_continue(t, "one", [pane], "one machine"):
        return
    final = t.wait("one", lambda s: exit_code(s) is not None, "one machine: the job ends after fg", 60)
    if final is None:
        return
    check("one machine: the job exits 0", exit_code(final) == 0, final)
    check(f"one machine: the weights CRC is the one of the job never stopped ({crc(reference)})",
          crc(reference) is not None and crc("\n".join(final).replace("\n", "")) == crc(reference), final)


def test_two_machines(t, tmp):
    def start(k, port, job_port, **kwargs):
        return subprocess.Popen(two_machines(k, port, job_port), env=machine_env(t, k), cwd=tmp,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)

    port, job_port = free_port(), free_port()
    reference = [start(k, port, job_port) for k in (0, 1)]
    outputs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in reference]
    port, job_port = free_port(), free_port()
    member = start(1, port, job_port)
    t.session("two")
    env = " ".join(f"{k}={v}" for k, v in machine_env(t, 0).items() if k in ("ACCEL_HOST_ID", "GLOO_SOCKET_IFNAME"))
    pane = int(t.tmux("display-message", "-p", "-t", "two", "#{pane_pid}").stdout.decode().strip())
    t.type("two", env + " " + " ".join(two_machines(0, port, job_port)))
    try:
        if not stop_and_continue(t, "two", [pane, member.pid], "two machines"):
            return
        final = t.wait("two", lambda s: exit_code(s) is not None, "two machines: the job ends after fg", 60)
        said = member.communicate(timeout=60)[0].decode(errors="replace")
    finally:
        if member.poll() is None:
            member.kill()
    if final is None:
        return
    check("two machines: both launchers exit 0", exit_code(final) == 0 and member.returncode == 0, final)
    check("two machines: machine 1 stopped and continued its workers with the job",
          "the job was stopped on another machine" in said and "the job continues" in said)
    check(f"two machines: the weights CRC is the one of the job never stopped ({crc(outputs[0])})",
          crc(outputs[0]) is not None and crc("\n".join(final).replace("\n", "")) == crc(outputs[0]), final)


if __name__ == "__main__":
    run_scenarios("job control", (test_one_machine, test_two_machines))
