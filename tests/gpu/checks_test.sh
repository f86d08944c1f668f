#!/usr/bin/env bash
# scripts/test-gpu on a machine without a GPU (CTest `gpu_checks`), as far as it can go here:
#  1. `run` skips: exit 0, the reason, a report with every check marked skipped and a summary;
#  2. the checks that need no CUDA (env, visible, launch) run verbatim against fake_nvml and a
#     fake nvidia-smi describing the same two GPUs, and pass;
#  3. a fact that differs (GPU 0's memory) makes the env check fail and name it, and a GPU test
#     that skips (CUDA sees no GPU here) fails its check with the test's reason as the figure;
#  4. the torch and flight checks skip, saying why, where python3's torch sees no GPU.
# Usage: checks_test.sh BUILD_DIR   (its bin/accel and lib/libfake_nvml.so)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
expect() {  # expect WHAT COMMAND...: the command must succeed
  if "${@:2}"; then echo "ok $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}

# 1. No GPU: PATH without nvidia-smi.
if command -v nvidia-smi >/dev/null; then
  echo "note: this machine has nvidia-smi; the skip path is not checked here"
else
  out=$(ACCEL_GPU_BUNDLE="$work/no-bundle" "$root/scripts/test-gpu" run "$work/report" 2>&1)
  code=$?
  echo "$out"
  expect "run without a GPU exits 0" test "$code" -eq 0
  expect "it says why it skipped" grep -q "skipped: no NVIDIA driver here (nvidia-smi is not on PATH)" <<<"$out"
  expect "the report marks all 13 checks skipped" test "$(grep -c '| skipped |' "$work/report/report.md")" -eq 13
  expect "the summary is printed last" grep -q "0 passed, 0 failed, 13 skipped" <<<"$(tail -1 <<<"$out")"
fi

# 2. and 3. The checks themselves against two fake GPUs.
mkdir -p "$work/fakebin" "$work/out" "$work/site/nvidia/nccl/lib"
ln -s "$root/tests/gpu/fake-nvidia-smi" "$work/fakebin/nvidia-smi"
export PATH="$work/fakebin:$PATH" ACCEL_NVML_LIBRARY="$build/lib/libfake_nvml.so" FAKE_NVML_GPUS=2 FAKE_SMI_GPUS=2
export ACCEL_ROOT="$root" BUNDLE="$build" GPU_COUNT=2 GPU_OUT="$work/out" NCCL_DIR="$work/site/nvidia/nccl/lib"
# The NCCL wheel's version is whatever NCCL accel finds here (none on a machine without CUDA).
nccl=$("$build/bin/accel" env --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["libraries"]["nccl"]["version"] or "")')
mkdir -p "$work/site/nvidia_nccl_cu13-${nccl:-2.28.9}.dist-info"
check() { (cd "$GPU_OUT" && bash -c "source '$root/scripts/gpu/checks.sh'; check_$1") >"$work/$1.log" 2>&1; }
check env
code=$?
cat "$work/env.log"
if [ -n "$nccl" ]; then
  expect "env matches the fake nvidia-smi" test "$code" -eq 0
else  # no NCCL here: that one line must fail, and only it
  expect "env fails on NCCL alone (none here)" test "$(grep -c '^FAIL' "$work/env.log")" -eq 1 -a "$(grep -c '^FAIL NCCL' "$work/env.log")" -eq 1
fi
expect "env compared topology and PCI ids" grep -q "^ok topology matrix: \[\['X', 'NV18'\], \['NV18', 'X'\]\]" "$work/env.log"
check visible
expect "visible passes" test $? -eq 0
cat "$work/visible.log"
expect "visible tried 5 settings" grep -q "figure: 5 settings" "$work/visible.log"
check launch
expect "launch passes" test $? -eq 0
cat "$work/launch.log"
FAKE_SMI_MEMORY_MIB=81559 check env
expect "a different memory size fails the env check" test $? -ne 0
expect "and is named" grep -q "^FAIL GPU 0 memory: 81920 MiB / 81559 MiB" "$work/env.log"
check train
expect "a GPU test that skips fails its check" test $? -ne 0
cat "$work/train.log"
expect "with the reason as its figure" grep -qE "^figure: skipped: (accel-train|this build)" "$work/train.log"
# The bandwidth judge reads accel-bench's real JSON lines (here from Gloo on two CPU ranks).
"$build/bin/accel" launch -q --cpu --num_processes 2 --main_process_port 0 "$build/bin/accel-bench" --sizes 4K:64K \
  --iters 3 --json | sed 's/^\[rank [0-9]*\] //' >"$work/bench.json"
python3 "$root/scripts/gpu/compare.py" bench "$work/bench.json" >"$work/bench.log"
expect "the bench judge reads accel-bench --json" test $? -eq 0
cat "$work/bench.log"
expect "and reports the largest size" grep -q "^figure: all_reduce 64 KiB: algbw" "$work/bench.log"
# The torch check needs python3's torch to see a GPU; here (Debian's, CPU only) it skips, saying so.
check torch
expect "torch skips where python3's torch sees no GPU" test $? -eq 77
cat "$work/torch.log"
expect "and says why" grep -qE "^skipped: python3 has no CUDA torch \(.*(sees no GPU|No module named)" "$work/torch.log"
check flight
expect "flight skips where python3's torch sees no GPU" test $? -eq 77
cat "$work/flight.log"
echo "checks_test: $failures failure(s)"
[ "$failures" -eq 0 ]
