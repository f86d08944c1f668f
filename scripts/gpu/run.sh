# `scripts/test-gpu run [OUTDIR]`: finds the GPUs, the bundle and NCCL, runs every check of
# scripts/gpu/checks.sh in turn under its own time limit, and writes OUTDIR/report.md (one table
# row per check, written as it ends) and OUTDIR/<check>.log. Sourced by scripts/test-gpu.

# id | what it shows | time limit (s). The limits add up to 11 minutes 30 s, the most a run may
# take; `run OUTDIR ID...` runs only those checks, to split a run between shorter device calls.
readonly GPU_CHECKS=(
  "bundle|the bundle's programs load (libraries, NCCL) on this machine|15"
  "env|accel env / --json against nvidia-smi -q and topo -m: names, UUIDs, memory, compute capability, PCI ids, topology, driver, CUDA, NCCL|25"
  "visible|CUDA_VISIBLE_DEVICES by index, by UUID and empty, as accel env sees it|20"
  "nccl|NCCL backend: every collective, op, dtype and count against the serial reference|60"
  "watchdog|NCCL watchdog: a stalled rank becomes an error within the timeout|40"
  "amp|CUDA amp kernels bit for bit against the CPU, and their bandwidth against a device copy|40"
  "reducer|the reducer's device buckets over NCCL, every wire precision|30"
  "train|accel-train on the GPU: weights against the CPU path, resume, fp16/bf16|90"
  "launch|accel launch: one worker per GPU, too many processes refused; accel config default|20"
  "bench|accel-bench --backend nccl bandwidth|30"
  "flight|torch's NCCL flight recorder under accel: dump pipe, a stop's records, a timeout's dump|60"
  "accelerate|Accelerate's own GPU test scripts under accel launch beside accelerate launch|110"
  "torch|the libtorch component built against this machine's torch; its DDP against PyTorch's on CUDA, fp16, bit for bit|150"
)

report_row() {  # report_row ID RESULT FIGURE
  printf '| %s | %s | %s | [%s.log](%s.log) |\n' "$1" "$2" "${3//|//}" "$1" "$1" >>"$GPU_OUT/report.md"
  printf 'test-gpu: %-10s %-7s %s\n' "$1" "$2" "$3"
}

# Counts the GPUs nvidia-smi lists; on none, GPU_SKIP says why.
find_gpus() {
  GPU_COUNT=0 GPU_SKIP=""
  if ! command -v nvidia-smi >/dev/null; then
    GPU_SKIP="no NVIDIA driver here (nvidia-smi is not on PATH)"
    return
  fi
  local listing
  if ! listing=$(nvidia-smi -L 2>&1); then
    GPU_SKIP="nvidia-smi -L failed: $(echo "$listing" | head -1)"
    return
  fi
  GPU_COUNT=$(grep -c '^GPU [0-9]' <<<"$listing" || true)
  [ "$GPU_COUNT" -gt 0 ] || GPU_SKIP="nvidia-smi lists no GPU"
}

# The directory of the libnccl.so.2 this machine has: ACCEL_NCCL_DIR, the nvidia-nccl wheel of
# python3 (as torch uses it), a wheel in a usual place, then ldconfig's cache.
find_nccl() {
  local dir
  for dir in "${ACCEL_NCCL_DIR:-}" \
    "$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)" \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib \
    "$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / {print $NF; exit}' | xargs -r dirname)"; do
    if [ -n "$dir" ] && [ -e "$dir/libnccl.so.2" ]; then
      NCCL_DIR=$dir
      return 0
    fi
  done
  return 1
}

gpu_run() {
  GPU_OUT=${1:-build/gpu-report}
  shift || true
  local selected=" $* " entry
  for entry in "$@"; do
    if ! printf '%s\n' "${GPU_CHECKS[@]}" | grep -q "^$entry|"; then
      echo "scripts/test-gpu: run: no check '$entry' (the checks: $(printf '%s\n' "${GPU_CHECKS[@]}" | cut -d'|' -f1 | paste -sd' '))" >&2
      exit 2
    fi
  done
  BUNDLE=$(cd "${ACCEL_GPU_BUNDLE:-build/gpu-bundle}" 2>/dev/null && pwd || echo "${ACCEL_GPU_BUNDLE:-build/gpu-bundle}")
  mkdir -p "$GPU_OUT"
  GPU_OUT=$(cd "$GPU_OUT" && pwd)
  rm -f "$GPU_OUT"/*.log "$GPU_OUT"/report.md
  local start=$SECONDS passed=0 failed=0 skipped=0
  find_gpus
  if [ -z "$GPU_SKIP" ] && [ ! -x "$BUNDLE/bin/accel" ]; then
    echo "scripts/test-gpu: run: no bundle at $BUNDLE: run 'scripts/test-gpu pack' on a CPU machine and carry" \
      "that directory here (or set ACCEL_GPU_BUNDLE)" >&2
    exit 2
  fi
  if [ -z "$GPU_SKIP" ] && ! find_nccl; then
    NCCL_DIR=""
    echo "scripts/test-gpu: run: no libnccl.so.2 found (python3's nvidia-nccl wheel, ldconfig); set ACCEL_NCCL_DIR" >&2
  fi
  [ -n "${NCCL_DIR:-}" ] && export LD_LIBRARY_PATH="$NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  {
    echo "# accel GPU report"
    echo
    echo "- machine: $(hostname), $(uname -r); $([ -n "$GPU_SKIP" ] && echo "no GPU: $GPU_SKIP" || nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd, -)"
    echo "- bundle: $BUNDLE ($(sed -n 's/^commit: //p' "$BUNDLE/MANIFEST" 2>/dev/null || echo 'none'))"
    echo "- NCCL: $([ -n "$GPU_SKIP" ] && echo "not looked for" || echo "${NCCL_DIR:-not found}")"
    echo "- started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo "| check | result | figure | log |"
    echo "|---|---|---|---|"
  } >"$GPU_OUT/report.md"
  [ -n "$GPU_SKIP" ] && echo "scripts/test-gpu: run: skipped: $GPU_SKIP"
  export ACCEL_ROOT BUNDLE GPU_COUNT GPU_OUT NCCL_DIR
  # The checks see the real GPUs, all of them (tests/gpu/checks_test.sh points them at fakes).
  unset ACCEL_NVML_LIBRARY ACCEL_CUDA_LIBRARY CUDA_VISIBLE_DEVICES
  local id what limit rc figure
  for entry in "${GPU_CHECKS[@]}"; do
    IFS='|' read -r id what limit <<<"$entry"
    [[ $selected == "  " || $selected == *" $id "* ]] || continue
    if [ -n "$GPU_SKIP" ]; then
      echo "skipped: $GPU_SKIP" >"$GPU_OUT/$id.log"
      report_row "$id" skipped "$what (no GPU)"
      skipped=$((skipped + 1))
      continue
    fi
    rc=0
    (cd "$GPU_OUT" && timeout -k 10 "$limit" bash -c "source '$ACCEL_ROOT/scripts/gpu/checks.sh'; check_$id" \
      >"$GPU_OUT/$id.log" 2>&1) || rc=$?
    figure=$(sed -n 's/^figure: //p' "$GPU_OUT/$id.log" | tail -1)
    case $rc in
      0) report_row "$id" pass "${figure:-$what}"; passed=$((passed + 1)) ;;
      77) report_row "$id" skipped "$(grep -m1 '^skipped: ' "$GPU_OUT/$id.log" | cut -c10-)"; skipped=$((skipped + 1)) ;;
      124 | 137) report_row "$id" FAIL "over its ${limit} s limit; ${figure:-$what}"; failed=$((failed + 1)) ;;
      *) report_row "$id" FAIL "${figure:-$what} (exit $rc; first failure: $(grep -m1 -E '^FAIL|FAILED|error' "$GPU_OUT/$id.log" | cut -c1-160))"
         failed=$((failed + 1)) ;;
    esac
  done
  local summary="$passed passed, $failed failed, $skipped skipped in $((SECONDS - start)) s"
  [ -n "$GPU_SKIP" ] && summary="$summary (no GPU: $GPU_SKIP)"
  printf '\n**Summary**: %s.\n' "$summary" >>"$GPU_OUT/report.md"
  echo
  echo "test-gpu run: $summary; report: $GPU_OUT/report.md"
  [ "$failed" -eq 0 ]
}
