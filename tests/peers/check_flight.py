#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_flight.py - PyTorch workers' flight records (docs/diagnose.md) with the peers' torch 2.15
# over Gloo, under `accel launch --hang_timeout 4 --log_dir`: a rank that never enters the sixth
# all_reduce is named by the failure summary, with its last call; a rank that calls all_gather
# where the other calls all_reduce is named too; each rank's record (a JSON file) and torch's own
# pickle (torch_rank_R) are in the attempt's flight folder, and torch's fr_trace, run on that
# folder as it is, finds the same (the missing rank, the mismatched collective). A healthy
# program with its own sitecustomize prints the same and exits with the same code with the
# recorder on and off (--flight_recorder off), and no line of torch's worker server reaches its
# output. Stragglers: of 4 ranks, the one 60 ms late to each all_reduce is named while the job runs
# (torch's records, read once a second) and no other (healthy runs: tests/cli/stragglers_test.cc,
# scripts/bench_flight, scripts/soak --only no-straggler).
# Run by scripts/peers in the peers' virtual environment (ACCEL: the binary). Exit 1 on a miss.
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.path.join(ROOT, "tests", "peers", "flight_worker.py")


def launch(tmp, mode, extra=(), env=None, procs=2, args=()):
    env = {**os.environ, "HF_HOME": tmp, "ACCEL_PYTHON": sys.executable, "PYTHONWARNINGS": "ignore", **(env or {})}
    start = time.monotonic()
    r = subprocess.run([ACCEL, "launch", "--cpu", "--num_processes", str(procs), "--main_process_port", "0",
                        "--grace_period", "2", *extra, WORKER, mode, *args], capture_output=True, text=True, env=env,
                       timeout=180)
    return r, time.monotonic() - start


def fr_trace(folder):
    r = subprocess.run([sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace", folder, "--prefix",
                        "torch_rank_"], capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def stopped(tmp, mode):
    logs = os.path.join(tmp, f"logs-{mode}")
    r, seconds = launch(tmp, mode, ["--hang_timeout", "4", "--log_dir", logs])
    folders = glob.glob(os.path.join(logs, "*", "attempt_0", "flight"))
    files = sorted(os.listdir(folders[0])) if folders else []
    return r, seconds, (folders[0] if folders else ""), files


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-flight-")
    checks = []
    hang, hang_s, hang_dir, hang_files = stopped(tmp, "hang")
    checks += [
        ("hang: exit 1 after --hang_timeout", hang.returncode == 1 and "no rank made progress for 4 s" in hang.stderr),
        ("hang: the summary names rank 1, the call and its number, and rank 1's last",
         re.search(r"all_reduce \(f32 x 10\) #6 of group 0: rank 0 entered it [0-9.]+ s ago; rank 1 \(host \S+, pid "
                   r"\d+\) never did: its last was all_reduce \(f32 x 10\) #5", hang.stderr) is not None),
        ("hang: each rank's record and torch's pickle in the attempt's flight folder",
         hang_files == ["rank_0.json", "rank_1.json", "torch_rank_0", "torch_rank_1"]),
    ]
    trace = fr_trace(hang_dir) if hang_dir else ""
    checks.append(("hang: torch's fr_trace on the folder: sequence number 6, rank 1 missing",
                   "Not all ranks joining collective, sequence number: 6" in trace and "missing ranks: {1}" in trace))
    mismatch, _, mismatch_dir, _ = stopped(tmp, "mismatch")
    checks.append(("mismatch: the summary names both calls",
                   "the ranks' calls #6 of group 0 differ: rank 0 called all_reduce (f32 x 10), rank 1 called "
                   "all_gather (f32 x 10)" in mismatch.stderr))
    mtrace = fr_trace(mismatch_dir) if mismatch_dir else ""
    checks.append(("mismatch: torch's fr_trace names rank 1's all_gather",
                   "Culprit rank 1; Error type: COLLECTIVE_TYPE_MISMATCH" in mtrace and "'all_gather'" in mtrace))
    site = os.path.join(tmp, "user-site")
    os.makedirs(site)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write("import os\nos.environ['USER_SITE_RAN'] = 'yes'\n")
    runs = {}
    for what, extra in (("on", ()), ("off", ("--flight_recorder", "off"))):
        r, seconds = launch(tmp, "healthy", extra, {"PYTHONPATH": site})
        runs[what] = (r, seconds)
    out = {w: sorted(l for l in r.stdout.splitlines() if l.startswith("[rank")) for w, (r, _) in runs.items()}
    checks += [
        ("healthy: the same output and exit code (3) with the recorder on and off",
         out["on"] == out["off"] and runs["on"][0].returncode == runs["off"][0].returncode == 3),
        ("healthy: the program's own sitecustomize ran under the hook",
         sum("site=yes sum=64" in l for l in out["on"]) == 2),
        ("healthy: no line of torch's worker server in the output",
         all("WorkerServer" not in r.stdout + r.stderr for r, _ in runs.values())),
    ]
    slow, _ = launch(tmp, "slow", procs=4, args=("2", "60", "80"))
    named = re.findall(r"accel: straggler: rank (\d+) \(host", slow.stderr)
    checks += [
        ("stragglers: rank 2, 60 ms late to each all_reduce, is named while the job runs, and no other",
         slow.returncode == 0 and named == ["2"] and slow.stderr.find("straggler: rank 2") < slow.stderr.find(
             "the job's straggler")),
    ]
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed = not all(ok for _, ok in checks)
    if failed:
        print("--- hang ---\n" + hang.stderr[-4000:] + "\n--- fr_trace ---\n" + trace[-3000:] + "\n--- mismatch ---\n" +
              mismatch.stderr[-3000:] + "\n--- fr_trace ---\n" + mtrace[-3000:])
        for w, (r, _) in runs.items():
            print(f"--- healthy, recorder {w} ---\n" + r.stdout[-2000:] + r.stderr[-2000:])
        print("--- slow ---\n" + slow.stderr[-3000:])
    print("\n".join(l for l in hang.stderr.splitlines() if "#6 of group" in l))
    print(f"flight records of torch workers: {sum(ok for _, ok in checks)} of {len(checks)} checks passed; hang "
          f"stopped in {hang_s:.2f} s; a healthy run {runs['on'][1]:.2f} s with the recorder, {runs['off'][1]:.2f} s "
          f"without")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
