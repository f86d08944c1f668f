# SPDX-License-Identifier: Apache-2.0
"""One `accel launch` job watched from outside (Job), and one trial of scripts/soak (Trial).

Contract: Job(argv, trial_dir, log) starts the launcher with a unique token in its environment
(ACCEL_SOAK_TRIAL=<uuid>), its own TMPDIR and HF_HOME under trial_dir, stdin from /dev/null and
stdout + stderr into `log`. Every process of the job inherits the token (the launcher passes its
environment on), so scanning /proc/*/environ finds all of them, orphans included, and nothing
else on the machine. Each one found is held by a pidfd, so its exit is seen the moment it
happens (a zombie counts as gone: it holds no memory, socket or file any more) and a reused pid
can never be mistaken for it. Every wait here takes a deadline; nothing blocks without one.

Trial(ctx, name, index, seed): one trial's own directory (ctx.root/NAME-INDEX-*, holding tmp/
and hf/; each job's log lies beside it), its seeded random draw, its jobs, and what it found:
problems (empty: passed), whether the exit codes were as expected, processes alive afterwards,
files or /dev/shm entries left behind, and the time to stop.
"""
import os
import random
import re
import select
import signal
import subprocess
import tempfile
import time
import uuid

GRACE = 3.0                  # --grace_period of every job
BOUND = GRACE + 2.0          # the limit on the time to stop
STUCK = 60.0                 # a wait longer than this is a hang: the trial is killed and fails
TOKEN_VAR = "ACCEL_SOAK_TRIAL"
TICK = 0.01       # seconds between looks at the launcher's children (one small file)
FULL_SCAN = 0.25  # seconds between looks through all of /proc (~1 ms of CPU each here)


def now():
    return time.monotonic()


def _rank(environ):
    m = re.search(rb"(?:^|\0)RANK=(\d+)\0", environ or b"")
    return m.group(1).decode() if m else None


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


class Job:
    def __init__(self, argv, trial_dir, log_path, extra_env=None):
        self.argv = list(argv)
        self.token = uuid.uuid4().hex
        self.log_path = log_path
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ACCEL", "ACCELERATE", "TORCHELASTIC")) and
               k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
        env.update({TOKEN_VAR: self.token, "TMPDIR": os.path.join(trial_dir, "tmp"),
                    "HF_HOME": os.path.join(trial_dir, "hf")}, **(extra_env or {}))
        self._needle = f"\0{TOKEN_VAR}={self.token}\0".encode()
        self.tracked = {}  # pid -> {"fd": pidfd, "rank": str|None, "ppid": int}
        self.gone = {}     # pid -> monotonic time its exit was seen
        self._offset, self._text, self._last_scan = 0, "", 0.0
        with open(log_path, "wb") as log:
            self.started = now()
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, cwd=trial_dir, env=env)
        self.pid = self.proc.pid
        self._track(self.pid)

    # --- finding and following the job's processes --------------------------------------------
    def _environ(self, pid):
        data = _read(f"/proc/{pid}/environ")
        return None if data is None or self._needle not in b"\0" + data else data

    def _track(self, pid):
        if pid in self.tracked or self._environ(pid) is None and pid != self.pid:
            return
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return
        data = self._environ(pid)  # checked again through the pidfd's lifetime: same process
        if data is None and pid != self.pid:
            os.close(fd)
            return
        stat = (_read(f"/proc/{pid}/stat") or b"").rsplit(b")", 1)[-1].split()
        self.tracked[pid] = {"fd": fd, "rank": _rank(data), "ppid": int(stat[1]) if len(stat) > 1 else 0}

    def scan(self):
        """Looks through /proc for processes carrying the token; starts following new ones."""
        self._last_scan = now()
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in self.tracked:
                self._track(int(name))

    def scan_children(self):
        """The launcher's children only: the workers, found as soon as they are forked."""
        kids = _read(f"/proc/{self.pid}/task/{self.pid}/children") or b""
        for pid in kids.split():
            if int(pid) not in self.tracked:
                self._track(int(pid))

    def watch(self, timeout):
        """Waits up to `timeout` s for any followed process to exit; notes when each did."""
        live = {v["fd"]: pid for pid, v in self.tracked.items() if pid not in self.gone}
        if not live:
            time.sleep(timeout)
            return
        p = select.poll()
        for fd in live:
            p.register(fd, select.POLLIN)
        for fd, _ in p.poll(max(0, int(timeout * 1000))):
            self.gone.setdefault(live[fd], now())

    def tick(self, interval=TICK):
        """One look (the launcher's children; all of /proc now and then), then waits up to
        `interval` s for exits."""
        self.scan_children()
        if now() - self._last_scan >= FULL_SCAN:
            self.scan()
        self.watch(interval)

    def alive(self):
        self.scan()
        self.watch(0)
        return [pid for pid in self.tracked if pid not in self.gone]

    def workers(self):
        """The launcher's children with a RANK, by rank (those still running)."""
        for pid, v in self.tracked.items():
            if v["rank"] is None and v["ppid"] == self.pid and pid not in self.gone:
                v["rank"] = _rank(self._environ(pid))  # first seen between fork and exec
        return {v["rank"]: pid for pid, v in self.tracked.items()
                if v["rank"] is not None and v["ppid"] == self.pid and pid not in self.gone}

    def launcher_done(self):
        return self.pid in self.gone

    # --- output ---------------------------------------------------------------------------------
    def output(self):
        with open(self.log_path, "rb") as f:
            f.seek(self._offset)
            chunk = f.read()
        self._offset += len(chunk)
        self._text += chunk.decode(errors="replace")
        return self._text

    def wait_for(self, pattern, deadline):
        """True once `pattern` (a regex) appears in the output; False if the launcher ended first
        or the deadline passed."""
        rx = re.compile(pattern)
        while now() < deadline:
            if rx.search(self.output()):
                return True
            if self.launcher_done():
                return bool(rx.search(self.output()))
            self.tick()
        return False

    def wait_lines(self, pattern, count, deadline):
        """Waits until `count` more output lines (from now on) match `pattern`. Returns when
        the last two were first seen ([t] for one), or None if the launcher ended first or the
        deadline passed."""
        rx, seen, pos = re.compile(pattern), [], self.output().rfind("\n") + 1
        while now() < deadline and not self.launcher_done():
            text = self.output()
            end = text.rfind("\n") + 1  # whole lines only
            seen += [now()] * len(rx.findall(text, pos, end))
            pos = end
            if len(seen) >= count:
                return seen[count - 2:count] if count > 1 else seen[:1]
            self.tick()
        return None

    def wait_all_gone(self, deadline):
        """Follows the job until no process with the token is left or the deadline passes.
        Returns (time the last one was seen to exit or None, pids still alive)."""
        while now() < deadline and self.alive():
            self.tick()
        left = self.alive()
        return (max(self.gone.values()) if self.gone and not left else None), left

    def reap(self, timeout):
        """The launcher's exit status (Popen: -N for a signal), or None if it did not end."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill_all(self):
        """SIGKILL to every process of the job still alive (stuck trials, Ctrl-C of the soak)."""
        for pid in self.alive():
            try:
                signal.pidfd_send_signal(self.tracked[pid]["fd"], signal.SIGKILL)
            except OSError:
                pass
        self.reap(5)

    def close(self):
        for v in self.tracked.values():
            os.close(v["fd"])
        self.tracked.clear()

    def signal(self, pid, sig):
        """Sends through the pidfd: never to a recycled pid."""
        signal.pidfd_send_signal(self.tracked[pid]["fd"], sig)


class Trial:
    """What one trial found; `problems` empty means it passed."""
    def __init__(self, ctx, name, index, seed):
        self.ctx, self.seed, self.rng = ctx, seed, random.Random(seed)
        self.dir = tempfile.mkdtemp(prefix=f"{name}-{index}-", dir=ctx.root)
        for sub in ("tmp", "hf"):
            os.mkdir(os.path.join(self.dir, sub))
        self.shm_before = set(os.listdir("/dev/shm"))
        self.jobs, self.problems, self.notes = [], [], []
        self.exits_ok = []  # one per launcher exit checked: was it the expected code?
        self.alive, self.left, self.stop = 0, 0, None
        self.launcher_killed = False  # a SIGKILLed launcher cannot remove its error-file directory

    def start(self, argv, **env):
        job = Job(argv, self.dir, os.path.join(self.dir + ".log" + str(len(self.jobs))), env)
        self.jobs.append(job)
        return job

    def fail(self, why):
        self.problems.append(why)

    def idle(self, job, seconds):  # sleeps while still following the job's processes
        end = now() + seconds
        while now() < end:
            job.tick()

    def settle(self, job, fault, expect_rc):
        """After the fault: the launcher's exit, its code, the time to stop, survivors."""
        end = (fault or now()) + BOUND + STUCK
        while not job.launcher_done() and now() < end:
            job.tick()
        if not job.launcher_done():
            return self.fail(f"the launcher did not exit within {BOUND + STUCK:g} s of the fault")
        last, left = job.wait_all_gone(job.gone[job.pid] + BOUND)
        if left:
            self.alive += len(left)
            self.fail(f"{len(left)} process(es) of the job alive {BOUND:g} s after the launcher exited")
            job.kill_all()
        elif fault is not None:
            self.stop = last - fault
            if self.stop > BOUND:
                self.fail(f"time to stop {self.stop:.2f} s > {BOUND:g} s")
        rc = job.reap(5)
        self.exits_ok.append(rc == expect_rc)
        if rc != expect_rc:
            self.fail(f"launcher exit {rc}, expected {expect_rc}")
        return rc

    def finish(self):
        for job in self.jobs:
            if job.alive():
                self.alive += len(job.alive())
                self.fail("processes still alive at the end of the trial (killed)")
                job.kill_all()
            job.close()
        left = []
        for root, dirs, files in os.walk(self.dir):
            rel = os.path.relpath(root, self.dir)
            if rel == "ckpt" or rel.startswith("ckpt" + os.sep):
                continue  # checked against the checkpoint contract by ckpt-kill itself
            left += [os.path.normpath(os.path.join(rel, n)) for n in dirs + files
                     if os.path.normpath(os.path.join(rel, n)) not in ("tmp", "hf", "ckpt")]
        if self.launcher_killed:  # TMPDIR/accel-errors-XXXXXX (lib/launch/supervise/error_file.h), as torchrun's
            left = [n for n in left if not re.match(r"tmp/accel-errors-[^/]+(/|$)", n)]
        left += ["/dev/shm/" + n for n in set(os.listdir("/dev/shm")) - self.shm_before]
        if left:
            self.left += len(left)
            self.fail("left behind: " + ", ".join(sorted(left)[:10]))

    def report(self):
        lines = [f"  seed {self.seed}: " + "; ".join(self.problems)]
        for job in self.jobs:
            lines.append("    $ " + " ".join(job.argv))
            lines += ["    | " + l for l in job.output().splitlines()[-15:]]
        return "\n".join(lines)
