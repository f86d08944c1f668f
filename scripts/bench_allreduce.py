"""The runs and the report of scripts/bench_allreduce (which builds and installs what it needs).

Usage: bench_allreduce.py BIN_DIR ANCHORS_DIR TOOLS_DIR REPEATS
"""
import collections
import json
import statistics
import subprocess
import sys

bin_dir, anchors, tools, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
SIZES = "4K,64K,1M,16M,64M,256M"  # the anchors' sizes
# results[who][bytes] -> [(latency_us, busbw_gbps)]; barrier[who] -> [us]; ar2[bytes] -> [GB/s]
results = collections.defaultdict(lambda: collections.defaultdict(list))
barrier = collections.defaultdict(list)
ar2 = collections.defaultdict(list)


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def accel(backend):
    launch = [f"{bin_dir}/accel", "launch", "-q", "--cpu", "--num_processes", "2", "--main_process_port", "0",
              f"{bin_dir}/accel-bench", "--backend", backend, "--json"]
    for line in (run(launch + ["--sizes", SIZES]) + run(launch + ["--op", "barrier"])).splitlines():
        line = line.split("] ", 1)[-1]
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r["op"] == "barrier":
            barrier[backend].append(r["time_us"])
            continue
        assert r["wrong"] == 0, f"accel-bench reported wrong results: {r}"
        assert r["backend"] == backend, f"asked for {backend}, ran on {r['backend']}"
        results[backend][int(r["bytes"])].append((r["time_us"], r["busbw_gbps"]))


def anchor_lines(who, out):
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "ALLREDUCE":
            results[who][int(f[2])].append((float(f[4]), float(f[8])))
        elif f and f[0] == "BARRIER":
            barrier[who].append(float(next(x for x in f if x.startswith("med_us=")).split("=")[1]))


def torch(port):
    anchor_lines("torch", run(["/usr/bin/python3", f"{anchors}/torchrun113.py", "--nproc_per_node", "2",
                               "--monitor_interval", "0.1", "--master_port", str(port),
                               f"{anchors}/gloo_allreduce_bench.py", "--sizes", SIZES]))


def mpi():
    anchor_lines("mpi", run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", "--mca", "btl",
                             "self,vader", "--mca", "oob_tcp_if_include", "lo", f"{tools}/mpi_allreduce_bench"]))


def membw():
    for line in run([f"{tools}/membw"]).splitlines():
        f = line.split()
        if len(f) > 4 and f[0] == "MEMBW" and f[1] == "ar2_model":
            ar2[{"64MiB": 64 << 20, "256MiB": 256 << 20}[f[2]]].append(float(f[4]))


for i in range(repeats):
    accel("shm")
    accel("gloo")
    torch(29700 + i)
    mpi()
    membw()
    print(f"run {i + 1}/{repeats} done", flush=True)

WHO = [("shm", "accel shm"), ("gloo", "accel gloo"), ("torch", "torch+gloo"), ("mpi", "Open MPI")]
med = lambda rows, k: statistics.median(r[k] for r in rows)


def lat(who, b):
    return med(results[who][b], 0) if results[who].get(b) else float("nan")


def bw(who, b):
    return med(results[who][b], 1) if results[who].get(b) else float("nan")


print(f"\n2 ranks, f32 sum all_reduce on one machine; median of {repeats} per-run medians (latency us | busbw GB/s)")
print(f"{'bytes':>10} " + " ".join(f"{n:>11}" for _, n in WHO) + " | " + " ".join(f"{n:>11}" for _, n in WHO)
      + f" | {'ar2_model':>9} {'shm/ar2':>7} {'shm/torch':>9}")
for b in sorted(results["shm"]):
    row = " ".join(f"{lat(w, b):>11.1f}" for w, _ in WHO) + " | " + " ".join(f"{bw(w, b):>11.3f}" for w, _ in WHO)
    model = statistics.median(ar2[b]) if ar2.get(b) else float("nan")
    print(f"{b:>10} {row} | {model:>9.3f} {bw('shm', b) / model:>7.2f} {bw('shm', b) / bw('torch', b):>9.2f}")
print(f"{'barrier':>10} " + " ".join(f"{statistics.median(barrier[w]) if barrier[w] else float('nan'):>11.2f}"
                                    for w, _ in WHO))

ok = True


def target(name, value, passed):
    global ok
    ok &= passed
    print(f"target: {name}: {'PASS' if passed else 'FAIL'} ({value})")


target("shared memory, 4 KiB all_reduce <= 5 us", f"{lat('shm', 4096):.2f} us", lat("shm", 4096) <= 5)
target("shared memory, barrier <= 2 us", f"{statistics.median(barrier['shm']):.2f} us",
       statistics.median(barrier["shm"]) <= 2)
for b in (64 << 20, 256 << 20):
    model = statistics.median(ar2[b])
    target(f"shared memory, busbw at {b >> 20} MiB >= 80 % of ar2_model",
           f"{bw('shm', b):.3f} vs {model:.3f} GB/s: {bw('shm', b) / model:.0%}", bw("shm", b) >= 0.8 * model)
target("Gloo, 4 KiB latency no worse than torch+gloo", f"{lat('gloo', 4096):.1f} vs {lat('torch', 4096):.1f} us",
       lat("gloo", 4096) <= lat("torch", 4096))
target("Gloo, 64 MiB busbw at least torch+gloo's", f"{bw('gloo', 64 << 20):.3f} vs {bw('torch', 64 << 20):.3f} GB/s",
       bw("gloo", 64 << 20) >= bw("torch", 64 << 20))
sys.exit(0 if ok else 1)
