#!/usr/bin/env python3
"""Judges what scripts/test-gpu's checks collected; the standard library only (the GPU image's
Python and Debian's both run it). Each subcommand prints one line per comparison ("ok ..." or
"FAIL ..."), then a last line "figure: ..." for the report, and exits 1 if anything failed.

  compare.py env DIR        accel env --json (DIR/env.json) against nvidia-smi: DIR/smi.csv
                            (--query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id,
                            driver_version --format=csv,noheader,nounits), DIR/smi.txt (its
                            banner: the CUDA version), DIR/topo.txt (topo -m), DIR/nccl_version
                            (the NCCL found on the machine)
  compare.py visible DIR    DIR/visible-NAME.json, accel env --json under CUDA_VISIBLE_DEVICES
                            DIR/visible-NAME.want (expected UUIDs, one per line; empty: none)
  compare.py amp FILE       accel-bench amp output: each GPU kernel's GB/s against the
                            device-to-device copy (target: at least 80 %)
  compare.py bench FILE     accel-bench --json output: bus bandwidth at the largest size, and no
                            wrong element
"""
import json
import re
import sys

failures = []


def judge(ok, what):
    print(("ok " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def smi_gpus(text):
    gpus = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 7 and cells[0].isdigit():
            gpus.append(dict(zip(["index", "name", "uuid", "memory_mib", "cc", "bus", "driver"], cells)))
    return gpus


def smi_topology(text, count):
    """The GPU-to-GPU block of `nvidia-smi topo -m`: rows GPUi (the header line, which starts
    with a tab, names the columns), their first `count` cells."""
    rows = []
    for line in text.splitlines():
        cells = line.split()
        if line[:1].strip() and re.fullmatch(r"GPU\d+", cells[0]) and len(cells) > count:
            rows.append(cells[1:count + 1])
    return rows


def env(d):
    report = json.loads(read(f"{d}/env.json"))["gpus"]
    smi = smi_gpus(read(f"{d}/smi.csv"))
    judge(report["count"] == len(smi), f"GPU count: accel {report['count']}, nvidia-smi {len(smi)}")
    for mine, theirs in zip(report["devices"], smi):
        i = theirs["index"]
        judge(mine["name"] == theirs["name"], f"GPU {i} name: {mine['name']!r} / {theirs['name']!r}")
        judge(mine["uuid"] == theirs["uuid"], f"GPU {i} UUID: {mine['uuid']} / {theirs['uuid']}")
        mib = mine["memory_total_bytes"] // (1 << 20)
        judge(str(mib) == theirs["memory_mib"], f"GPU {i} memory: {mib} MiB / {theirs['memory_mib']} MiB")
        judge(mine["compute_capability"] == theirs["cc"], f"GPU {i} compute capability: {mine['compute_capability']} / {theirs['cc']}")
        judge(mine["pci_bus_id"].lower() == theirs["bus"].lower(), f"GPU {i} PCI bus id: {mine['pci_bus_id']} / {theirs['bus']}")
    if smi:
        judge(report["driver_version"] == smi[0]["driver"], f"driver: {report['driver_version']} / {smi[0]['driver']}")
    banner = re.search(r"CUDA Version:\s*([\d.]+)", read(f"{d}/smi.txt"))
    theirs = banner.group(1) if banner else "(not in nvidia-smi's banner)"
    judge(report["cuda_driver_version"] == theirs, f"CUDA version of the driver: {report['cuda_driver_version']} / {theirs}")
    topology = smi_topology(read(f"{d}/topo.txt"), len(smi))
    judge(report["topology"] == topology, f"topology matrix: {report['topology']} / {topology}")
    nccl = json.loads(read(f"{d}/env.json"))["libraries"]["nccl"]
    found = read(f"{d}/nccl_version").strip()
    judge(nccl["version"] == found, f"NCCL: accel env {nccl['version'] or nccl['error']} / on the machine {found}")
    names = sorted({g["name"] for g in smi})
    return f"{len(smi)} x {', '.join(names) or 'no GPU'}, driver {report['driver_version']}, CUDA {theirs}, NCCL {found}: " \
           f"{'every fact matches nvidia-smi' if not failures else str(len(failures)) + ' mismatches'}"


def visible(d):
    import glob
    cases = sorted(glob.glob(f"{d}/visible-*.want"))
    for want_file in cases:
        name = want_file[len(f"{d}/visible-"):-len(".want")]
        want = [u for u in read(want_file).split() if u]
        setting = read(f"{d}/visible-{name}.setting").strip()
        got = [g["uuid"] for g in json.loads(read(f"{d}/visible-{name}.json"))["gpus"]["devices"]]
        judge(got == want, f"CUDA_VISIBLE_DEVICES={setting!r}: accel env shows {got or 'no GPU'}, expected {want or 'no GPU'}")
    return f"{len(cases)} settings of CUDA_VISIBLE_DEVICES (by index, by UUID, none)"


def amp(path):
    rows, on_gpu = {}, False
    for line in read(path).splitlines():
        if line.startswith("# accel-bench amp (GPU"):
            on_gpu = True
        m = re.match(r"\s+(.+?)\s+([\d.]+) GB/s", line)
        if on_gpu and m:
            rows[m.group(1)] = float(m.group(2))
    copy = rows.pop("cudaMemcpy D2D", 0.0)
    judge(copy > 0 and len(rows) == 5, f"accel-bench amp reported the copy ({copy:.0f} GB/s) and 5 kernels ({len(rows)})")
    for name, gbps in rows.items():
        judge(gbps >= 0.8 * copy, f"{name}: {gbps:.0f} GB/s, {100 * gbps / max(copy, 1e-9):.0f} % of the copy (target 80 %)")
    worst = min(rows.values(), default=0.0)
    return f"copy {copy:.0f} GB/s; slowest kernel {worst:.0f} GB/s ({100 * worst / max(copy, 1e-9):.0f} %)"


def bench(path):
    rows = [json.loads(l) for l in read(path).splitlines() if l.startswith("{")]
    judge(bool(rows), f"accel-bench printed {len(rows)} sizes")
    judge(all(r["wrong"] == 0 for r in rows), "no wrong element at any size")
    if not rows:
        return "no result"
    last = rows[-1]
    size = last["bytes"]
    size = f"{size / (1 << 20):.0f} MiB" if size >= 1 << 20 else f"{size / 1024:.0f} KiB"
    return f"{last['op']} {size}: algbw {last['algbw_gbps']:.1f} GB/s, busbw {last['busbw_gbps']:.1f} GB/s"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("env", "visible", "amp", "bench"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        figure = globals()[sys.argv[1]](sys.argv[2])
    except (OSError, ValueError, KeyError, TypeError) as e:
        judge(False, f"could not read what the check collected: {type(e).__name__}: {e}")
        figure = "no figure"
    print(f"figure: {figure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
