# The checks of `scripts/test-gpu run`, one function each (check_<id>, listed in run.sh). Each
# runs in its own bash in the report directory with ACCEL_ROOT, BUNDLE, GPU_COUNT, NCCL_DIR set,
# writes what it did to its log, ends with a line "figure: ..." and returns 0 (pass), 77
# (skipped: the reason on a line "skipped: ...") or anything else (fail).

COMPARE="python3 $ACCEL_ROOT/scripts/gpu/compare.py"
# Never this machine's accel/Accelerate config; Gloo (beside NCCL) on loopback.
export HF_HOME="$GPU_OUT/hf-home" GLOO_SOCKET_IFNAME=lo

# Runs the bundle's Catch2 GPU tests whose names match a pattern. The figure is the first lines
# of their WARN messages (Catch prints warnings of passing tests too; at most 4), else Catch's
# totals. A test that skips fails the check.
run_gpu_tests() {
  local spec=$1 out rc=0
  out=$(mktemp)
  "$BUNDLE/bin/accel_runtime_tests" "$spec" -r compact --durations yes >"$out" 2>&1 || rc=$?
  cat "$out"
  local figure
  figure=$(sed -n "s/.* warning: '\([^']*\)'\{0,1\}\$/\1/p" "$out" | head -4 | paste -sd';' | sed 's/;/; /g')
  [ -n "$figure" ] || figure=$(grep -E '^(Passed|Failed)' "$out" | tail -1)
  echo "figure: $figure"
  # nvidia-smi lists a GPU, so a test that skips for want of one (CUDA sees none, no NCCL in
  # the build) is a failure here.
  if grep -q " warning: 'skipped: " "$out"; then
    echo "FAIL a GPU test skipped on a machine with $GPU_COUNT GPU(s)"
    rc=1
  fi
  rm -f "$out"
  return $rc
}

check_bundle() {
  local rc=0 f
  for f in "$BUNDLE"/bin/* "$BUNDLE"/lib/*; do
    if ldd "$f" | grep -q 'not found'; then
      echo "FAIL $(basename "$f"): $(ldd "$f" | grep 'not found' | paste -sd' ')"
      rc=1
    fi
  done
  "$BUNDLE/bin/accel" --version || rc=1
  ldd "$BUNDLE/bin/accel-train" | grep -E 'nccl|cudart|gloo'
  echo "figure: $(ls "$BUNDLE/bin" | wc -l) programs load; NCCL from ${NCCL_DIR:-nowhere}"
  return $rc
}

check_env() {
  "$BUNDLE/bin/accel" env >env.txt && cat env.txt
  "$BUNDLE/bin/accel" env --json >env.json
  nvidia-smi --query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id,driver_version \
    --format=csv,noheader,nounits >smi.csv
  nvidia-smi >smi.txt
  nvidia-smi topo -m >topo.txt
  nvidia-smi -q >smi-q.txt
  cat smi.csv topo.txt
  # NCCL's own version: the wheel's metadata, else the file name libnccl.so.2.X.Y.
  local version
  version=$(ls -d "$NCCL_DIR"/../../../nvidia_nccl*.dist-info 2>/dev/null | sed -n 's/.*nvidia_nccl_cu[0-9]*-\([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' | head -1)
  [ -n "$version" ] || version=$(readlink -f "$NCCL_DIR/libnccl.so.2" | sed -n 's/.*libnccl\.so\.\([0-9]*\.[0-9]*\.[0-9]*\)$/\1/p')
  echo "${version:-unknown}" >nccl_version
  $COMPARE env .
}

check_visible() {
  local uuids=() i
  mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
  visible_case() {  # NAME SETTING EXPECTED_UUIDS...
    local name=$1 setting=$2
    shift 2
    echo "$setting" >"visible-$name.setting"
    printf '%s\n' "$@" >"visible-$name.want"
    CUDA_VISIBLE_DEVICES=$setting "$BUNDLE/bin/accel" env --json >"visible-$name.json"
  }
  visible_case index 0 "${uuids[0]}"
  visible_case uuid "${uuids[-1]}" "${uuids[-1]}"
  visible_case none "" ""
  visible_case minus-one -1 ""
  if [ ${#uuids[@]} -ge 2 ]; then
    visible_case reversed 1,0 "${uuids[1]}" "${uuids[0]}"
  fi
  $COMPARE visible .
}

check_nccl() { run_gpu_tests "nccl: every collective*"; }
check_watchdog() { run_gpu_tests "nccl: a stalled rank*"; }
check_reducer() { run_gpu_tests "reducer: gradients in CUDA memory*"; }
check_train() { run_gpu_tests "trainer: on CUDA devices*"; }

check_amp() {
  local rc=0
  run_gpu_tests "amp kernels: GPU casts*" || rc=1
  "$BUNDLE/bin/accel-bench" amp --sizes 256M | tee amp.txt
  $COMPARE amp amp.txt || rc=1
  return $rc
}

check_launch() {
  local rc=0 out
  # No --num_processes, no config: one worker per GPU, each on its own device.
  out=$("$BUNDLE/bin/accel" launch --main_process_port 0 sh -c 'echo "world=$WORLD_SIZE local_rank=$LOCAL_RANK"' 2>&1) || rc=1
  echo "$out"
  local workers
  workers=$(grep -c "world=$GPU_COUNT " <<<"$out" || true)
  [ "$workers" -eq "$GPU_COUNT" ] && echo "ok one worker per GPU ($GPU_COUNT)" || { echo "FAIL $workers workers for $GPU_COUNT GPUs"; rc=1; }
  # One process more than there are GPUs: refused before anything starts, exit 2.
  local code=0
  out=$("$BUNDLE/bin/accel" launch --num_processes $((GPU_COUNT + 1)) sh -c true 2>&1) || code=$?
  echo "$out"
  [ "$code" -eq 2 ] && grep -q "only $GPU_COUNT GPU" <<<"$out" && echo "ok $((GPU_COUNT + 1)) processes refused (exit 2)" ||
    { echo "FAIL $((GPU_COUNT + 1)) processes: exit $code"; rc=1; }
  "$BUNDLE/bin/accel" config default --config_file default_config.yaml && cat default_config.yaml
  grep -qx "num_processes: $GPU_COUNT" default_config.yaml && grep -qx 'use_cpu: false' default_config.yaml &&
    echo "ok accel config default: num_processes $GPU_COUNT, use_cpu false" || { echo "FAIL accel config default"; rc=1; }
  echo "figure: $GPU_COUNT worker(s) for $GPU_COUNT GPU(s); $((GPU_COUNT + 1)) refused; config default num_processes: $GPU_COUNT"
  return $rc
}

# torch's NCCL flight recorder as accel sets it up for a Python job on GPUs (docs/diagnose.md):
# the dump pipe and file accel names work, a --hang_timeout stop reads each rank's record through
# torch's NCCL handler and keeps torch's pickle; with two GPUs or more, a rank that skips an
# all_reduce makes the others' watchdog time out and dump, and the stop keeps that dump.
check_flight() {
  local reason rc=0 logs=$GPU_OUT/flight-logs out
  reason=$(python3 -c 'import torch; assert torch.cuda.is_available(), f"torch {torch.__version__} sees no GPU"' 2>&1) || {
    echo "skipped: python3 has no CUDA torch ($(tail -1 <<<"$reason"))"
    return 77
  }
  out=$(ACCEL_PYTHON=python3 timeout 120 "$BUNDLE/bin/accel" launch --num_processes 1 --main_process_port 0 \
    --hang_timeout 8 --grace_period 3 --log_dir "$logs/pipe" "$ACCEL_ROOT/tests/gpu/fr_nccl.py" pipe 2>&1) || true
  echo "$out"
  grep -q "pipe dump bytes=[1-9]" <<<"$out" && echo "ok the dump pipe accel named made torch write its dump file" ||
    { echo "FAIL no dump through the pipe"; rc=1; }
  grep -q "where the ranks part (their flight records" <<<"$out" && grep -q "all_reduce" <<<"$out" &&
    echo "ok the stop read rank 0's NCCL record" || { echo "FAIL the stop read no NCCL record"; rc=1; }
  ls "$logs"/pipe/*/attempt_0/flight/ 2>&1
  compgen -G "$logs/pipe/*/attempt_0/flight/torch_rank_0" >/dev/null && echo "ok torch's pickle kept" ||
    { echo "FAIL no torch_rank_0 in the flight folder"; rc=1; }
  local timeout_part="one GPU: no timeout dump (needs two)"
  if [ "$GPU_COUNT" -ge 2 ]; then
    out=$(ACCEL_PYTHON=python3 timeout 150 "$BUNDLE/bin/accel" launch --num_processes 2 --main_process_port 0 \
      --grace_period 3 --log_dir "$logs/skip" "$ACCEL_ROOT/tests/gpu/fr_nccl.py" skip 2>&1) || true
    echo "$out"
    if grep -q "torch's own dump at its timeout is kept" <<<"$out"; then
      timeout_part="two GPUs: rank 0's watchdog dump on its timeout kept"
      echo "ok $timeout_part"
    else
      echo "FAIL no watchdog dump kept after the timeout"
      rc=1
    fi
  fi
  echo "figure: pipe dump and stop read on one GPU; $timeout_part"
  return $rc
}

check_bench() {
  # A world of one all-reduces nothing (in place), so one GPU measures all_gather (a copy
  # through NCCL); bus bandwidth needs two GPUs or more.
  local op=all_reduce
  [ "$GPU_COUNT" -eq 1 ] && op=all_gather
  "$BUNDLE/bin/accel" launch -q --main_process_port 0 "$BUNDLE/bin/accel-bench" --backend nccl --op $op \
    --sizes 1M:1G --iters 20 --json | sed 's/^\[rank [0-9]*\] //' | tee bench.json
  $COMPARE bench bench.json
}

check_accelerate() {
  local scripts
  scripts=$(python3 -c 'import accelerate, os, torch; assert torch.cuda.is_available(), "torch sees no GPU"; print(os.path.join(os.path.dirname(accelerate.__file__), "test_utils", "scripts"))' 2>&1) || {
    echo "skipped: python3 has no accelerate with a CUDA torch ($scripts)"
    return 77
  }
  # Every script under both launchers at once (one GPU holds them all), each on its own port.
  local s i=0 pids=() names=()
  for s in test_script.py test_sync.py test_ops.py test_distributed_data_loop.py test_ddp_comm_hook.py; do
    "$BUNDLE/bin/accel" launch -q --main_process_port 0 --num_processes "$GPU_COUNT" "$scripts/$s" >"accel-$s.log" 2>&1 &
    pids+=($!) names+=("accel-$s")
    python3 -m accelerate.commands.launch --num_processes "$GPU_COUNT" --num_machines 1 --mixed_precision no \
      --dynamo_backend no --main_process_port $((29641 + i)) $([ "$GPU_COUNT" -gt 1 ] && echo --multi_gpu) \
      "$scripts/$s" >"accelerate-$s.log" 2>&1 &
    pids+=($!) names+=("accelerate-$s")
    i=$((i + 1))
  done
  local k code rc=0 results=() start=$SECONDS
  declare -A exit_of
  for k in "${!pids[@]}"; do
    code=0
    wait "${pids[$k]}" || code=$?
    exit_of[${names[$k]}]=$code
    echo "${names[$k]}: exit $code after $((SECONDS - start)) s"
    [ "$code" -eq 0 ] || tail -n 15 "${names[$k]}.log"
  done
  for s in test_script.py test_sync.py test_ops.py test_distributed_data_loop.py test_ddp_comm_hook.py; do
    local mine=${exit_of[accel-$s]} theirs=${exit_of[accelerate-$s]}
    [ "$mine" -eq 0 ] || rc=1
    results+=("${s%.py} $([ "$mine" -eq 0 ] && echo pass || echo FAIL)/$([ "$theirs" -eq 0 ] && echo pass || echo FAIL)")
  done
  echo "figure: under accel launch / accelerate launch: $(IFS=,; echo "${results[*]}" | sed 's/,/, /g')"
  return $rc
}

# The libtorch component built here against this machine's own torch (python3's, a CUDA build,
# with nvcc, CMake and Ninja beside it), from the runtime's headers and CMake package in the
# bundle (tests/torch/standalone/build.sh), then the world-1 DDP parity on CUDA: NCCL, fp16
# autocast through the loss scaler against GradScaler, cuDNN deterministic; bit-identical. Then
# ZeRO's CUDA path: stage 3 with optimizer and parameters offloaded (shards in pinned host memory,
# the optimizer step on the CPU, units gathered into CUDA memory) against DDP on the GPU, within
# 1e-6 relative after 20 steps (the CPU's SGD step against the GPU's).
check_torch() {
  local reason
  reason=$(python3 -c 'import torch; assert torch.cuda.is_available(), f"torch {torch.__version__} sees no GPU"' 2>&1) || {
    echo "skipped: python3 has no CUDA torch ($(tail -1 <<<"$reason"))"
    return 77
  }
  local built=0 build=$GPU_OUT/torch-build
  "$ACCEL_ROOT/tests/torch/standalone/build.sh" python3 "$BUNDLE" "$build" parity_worker zero_worker | tee torch-build.txt || built=$?
  if [ "$built" -eq 77 ]; then
    grep '^skipped: ' torch-build.txt
    return 77
  fi
  [ "$built" -eq 0 ] || { echo "FAIL the component did not build against python3's torch"; return 1; }
  # torch.load's default (weights only, torch >= 2.6) refuses torch::pickle_save's type tags.
  TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 python3 "$ACCEL_ROOT/tests/torch/parity_test.py" "$BUNDLE/bin/accel" \
    "$build/bin/parity_worker" cuda-fp16 | tee torch-parity.txt || return 1
  local zero=$GPU_OUT/zero stage
  for stage in 0 3; do
    mkdir -p "$zero/s$stage"
    HF_HOME=$zero/hf "$BUNDLE/bin/accel" launch --num_processes 1 --use_deepspeed --zero_stage "$stage" \
      --offload_optimizer_device cpu --offload_param_device cpu "$build/bin/zero_worker" "$zero/s$stage" 20 sgd \
      --width 256 --depth 4 >"zero-s$stage.txt" 2>&1 || { cat "zero-s$stage.txt"; echo "FAIL ZeRO stage $stage on CUDA"; return 1; }
  done
  python3 - "$zero" <<'PY' | tee torch-zero.txt || return 1
import sys, torch
a = torch.load(f"{sys.argv[1]}/s3/final-rank0.pt", weights_only=False)
b = torch.load(f"{sys.argv[1]}/s0/final-rank0.pt", weights_only=False)
worst = max(((a[k] - b[k]).abs().max() / b[k].abs().max()).item() for k in b)
assert worst <= 1e-6, f"ZeRO-3 with CPU offload on CUDA: {worst:.3g} relative from DDP"
print(f"ok: ZeRO-3 with CPU offload on CUDA against DDP on CUDA: {worst:.1e} relative after 20 steps")
PY
  echo "figure: $(tail -1 torch-build.txt); $(grep -m1 '^ok: ' torch-parity.txt | cut -c5-); $(cut -c5- torch-zero.txt)"
}
