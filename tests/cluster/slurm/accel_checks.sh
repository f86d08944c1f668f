# shellcheck shell=bash
# accel_checks.sh -- checks 4, 5 and 5b of slurm_test.sh (sourced by it, after
# slurm_up): `accel launch` under SLURM through the user-facing template
# scripts/slurm/sbatch_cpu_2x2.sh (2 nodes x 1 launcher x 2 CPU workers).
# Placement (machine rank, machine count, main process address) comes from
# SLURM's own variables, read by `accel launch` itself; the test sets none.
# Uses slurm_test.sh's say/pass/fail/indent/secs, W, JOB_TIMEOUT, CANCEL_LIMIT
# and ACCEL, TRAIN (binaries of the build under test).
#   accel_check_train    accel-train --steps 30 --log_every 0 --profile on the
#       2x2 job: COMPLETED 0:0, weights CRC = the same world of 4 on one host
#       (no --profile there: it only measures), rank r's lines prefixed
#       [h<r/2>:rank r] (--profile makes every rank print a line; without it
#       only rank 0 prints), each launcher's SLURM placement note and its
#       `network:` note (interface eth0 from its own NodeAddr).
#   accel_check_cancel   a 2x2 accel-train of 10^6 steps; once 4 workers (ranks
#       0,1 on h0, 2,3 on h1) and both launchers run and rank 0 logged a step,
#       scancel; passes when within CANCEL_LIMIT s no process of the job is left
#       (environment search slurm_job_procs, and any process in a host whose
#       command line names accel/accel-train) and the job is CANCELLED.
#   accel_check_deepspeed_slurm  Accelerate's DeepSpeed config, deepspeed_multinode_launcher
#       slurm, one `accel launch --num_machines 2` in a 2-node sbatch script: accel starts the
#       nodes' launchers with srun (which, inside the step, start no srun of their own whatever
#       the flags say); 4 ranks (fake GPUs), 2 a node, COMPLETED 0:0.

# T_REF T_TRAIN T_ACANCEL T_ACANCEL_JOB: timings (s) for slurm_test.sh's TIMING line.
# shellcheck disable=SC2034
SBATCH_CPU=$HERE/../../../scripts/slurm/sbatch_cpu_2x2.sh
ACCEL_RE='(^|/)accel(-train)?( |$)'   # a command line running (or naming) the binaries

# What a surrounding launch or shell may have set would change what the launchers do; sbatch
# passes the test's environment on to the job.
accel_clean_env() {
  local v
  unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE GROUP_RANK MASTER_ADDR MASTER_PORT \
        GLOO_SOCKET_IFNAME NCCL_SOCKET_IFNAME OMP_NUM_THREADS
  for v in $(compgen -e | grep -E '^(ACCELERATE|ACCEL|TORCHELASTIC)_' || true); do unset "$v"; done
  export HF_HOME=$W/hf   # no user config file
  export ACCEL          # the template's `accel`
}

crc_in() { { sed -n 's/.*weights crc32 \([0-9a-f]\{8\}\).*/\1/p' "$1" 2>/dev/null || true; } | tail -n 1; }

# accel_procs ID: "PID HOST launcher|worker RANK" for the job's accel processes.
accel_procs() {
  local pid host rest argv0 argv1 rank
  while read -r pid host rest; do
    [ -n "$pid" ] || continue
    argv0=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 1p) || continue
    argv1=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 2p) || true
    case ${argv0##*/} in
      accel) [ "$argv1" = launch ] && echo "$pid $host launcher -" ;;
      accel-train)
        rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^RANK=//p')
        echo "$pid $host worker ${rank:-?}" ;;
    esac
  done < <(slurm_job_procs "$1")
}

# emulated_2x2 ACCEL TRAIN DIR: accel_check_train's reference run, inside its namespace.
emulated_2x2() {
  local k pids=() rc=0
  ip link set lo up || return 1
  for k in 1 0; do
    ACCEL_HOST_ID=emulated-$k timeout 60 "$1" launch --cpu --num_machines 2 --machine_rank "$k" \
      --num_processes 4 --main_process_ip 127.0.0.1 --main_process_port 29500 \
      "$2" --steps 30 --log_every 0 >"$3/ref$k.out" 2>&1 &
    pids+=($!)
  done
  for k in "${pids[@]}"; do wait "$k" || rc=1; done
  return "$rc"
}

accel_check_train() {
  local id res ref got k r t0 t1
  t0=$(sl_now)
  # The reference: the job's layout (2 hosts x 2) emulated on this host, two launchers with
  # their own ACCEL_HOST_ID, so the runtime sums in the same order (shared memory inside a host,
  # Gloo between hosts' leaders) as on the two nodes; in a network namespace of their own, whose
  # loopback no other test shares, so the main and job ports are always free.
  local rc=0
  unshare --net -- bash -c "$(declare -f emulated_2x2); emulated_2x2 \"\$@\"" accel_check_train \
    "$ACCEL" "$TRAIN" "$W" || rc=1
  [ "$rc" = 0 ] || { fail "one-host reference run failed:"; indent <"$W/ref0.out"; }
  ref=$(crc_in "$W/ref0.out")
  t1=$(sl_now)
  say "2 hosts x 2 emulated on one host ($(secs "$t0" "$t1")): weights crc32 ${ref:-none}"
  T_REF=$(secs "$t0" "$t1")
  t0=$(sl_now)
  id=$(cd "$W" && slurm_submit "$W/train.out" --time=5 "$SBATCH_CPU" \
         "$TRAIN" --steps 30 --log_every 0 --profile) || { fail "sbatch of the accel job"; return 0; }
  res=$(slurm_wait_job "$id" "$JOB_TIMEOUT") || true
  t1=$(sl_now)
  T_TRAIN=$(secs "$t0" "$t1")
  say "accel-train job $id (sbatch_cpu_2x2.sh): $res"
  indent <"$W/train.out" || true
  if [ "$res" = "COMPLETED 0:0" ]; then pass "accel job completed"; else fail "accel job: $res"; fi
  got=$(crc_in "$W/train.out")
  if [ -n "$ref" ] && [ "$got" = "$ref" ]; then
    pass "weights crc32 $got: 2 nodes x 2 = 2 hosts x 2 emulated on one host"
  else
    fail "weights crc32: 2 nodes x 2 = ${got:-none}, emulated on one host = ${ref:-none}"
  fi
  if grep -q "after 30 steps (4 processes on cpu" "$W/train.out"; then pass "4 processes trained"; else fail "no 'after 30 steps (4 processes on cpu' line"; fi
  for r in 0 1 2 3; do
    if grep -q "^\[h$((r / 2)):rank $r\] " "$W/train.out"; then pass "rank $r ran on h$((r / 2))"; else fail "no line prefixed [h$((r / 2)):rank $r]"; fi
  done
  for k in 0 1; do
    if grep -q "SLURM job $id: machine_rank $k of 2 machines, main_process_ip h0\$" "$W/train.out"; then
      pass "launcher $k: placement from SLURM"
    else
      fail "no note 'SLURM job $id: machine_rank $k of 2 machines, main_process_ip h0'"
    fi
    if grep -q "network: this machine reaches main_process_ip h0 from $(slurm_node_addr "h$k") on eth0; workers get GLOO_SOCKET_IFNAME" "$W/train.out"; then
      pass "launcher $k: network note (eth0 from $(slurm_node_addr "h$k"))"
    else
      fail "no 'network: this machine reaches main_process_ip h0 from $(slurm_node_addr "h$k") on eth0; workers get GLOO_SOCKET_IFNAME...' note"
    fi
  done
}

# accel_left ID: processes of job ID, or any process in the hosts that names accel.
accel_left() { { slurm_job_procs "$1"; slurm_host_procs "$ACCEL_RE"; } | sort -u; }

accel_check_cancel() {
  local id procs seen ok=no t0 t1 want
  t0=$(sl_now)
  id=$(cd "$W" && slurm_submit "$W/train_cancel.out" --time=5 "$SBATCH_CPU" \
         "$TRAIN" --steps 1000000 --log_every 100) || { fail "sbatch of the accel cancel job"; return 0; }
  want=$'h0 launcher -\nh0 worker 0\nh0 worker 1\nh1 launcher -\nh1 worker 2\nh1 worker 3'
  for _ in $(seq 1 $((JOB_TIMEOUT * 2))); do
    procs=$(accel_procs "$id")
    if [ "$(cut -d' ' -f2- <<<"$procs" | sort)" = "$want" ] &&
       grep -q '^\[h0:rank 0\] step ' "$W/train_cancel.out" 2>/dev/null; then ok=yes; break; fi
    sl_sleep 0.5
  done
  say "accel processes of job $id before scancel (pid host kind rank):"; indent <<<"$procs"
  if [ $ok = yes ]; then
    pass "2 launchers and 4 workers (ranks 0,1 on h0; 2,3 on h1) running, training under way"
    # The search by command line (used below with the one by environment) must see them too.
    seen=$(slurm_host_procs "$ACCEL_RE")
    if [ "$(cut -d' ' -f1,2 <<<"$procs" | sort)" = "$(cut -d' ' -f1,2 <<<"$seen" | grep -Fxf <(cut -d' ' -f1,2 <<<"$procs") | sort)" ]; then
      pass "search by command line finds all 6 too ($(wc -l <<<"$seen") processes in the hosts name accel)"
    else
      fail "slurm_host_procs misses some of them:"; indent <<<"$seen"
    fi
    scancel_until_clean "$id" "accel launcher, worker or other process" accel_left "$id"
    T_ACANCEL=$T_CLEAN
  else
    fail "accel job $id: not 2 launchers + 4 workers training within ${JOB_TIMEOUT}s ($(squeue -h -j "$id" -o '%T %R' 2>/dev/null || true))"
  fi
  indent <"$W/train_cancel.out" || true
  t1=$(sl_now)
  T_ACANCEL_JOB=$(secs "$t0" "$t1")
}

# accel_check_deepspeed_slurm: Accelerate's DeepSpeed config with deepspeed_multinode_launcher
# slurm, started by one `accel launch` in an sbatch script of 2 nodes (no srun in it): accel runs
# one launcher per node through srun, placement from SLURM. Two fake GPUs per node (the fake
# NVML; DeepSpeed jobs need GPUs), so each node runs 2 ranks of a probe.
accel_check_deepspeed_slurm() {
  local id res r
  cat >"$W/ds_slurm.yaml" <<EOF
compute_environment: LOCAL_MACHINE
deepspeed_config:
  deepspeed_multinode_launcher: slurm
  zero_stage: 2
distributed_type: DEEPSPEED
machine_rank: 0
main_process_ip: h0
main_process_port: 29611
mixed_precision: 'no'
num_machines: 2
num_processes: 4
use_cpu: false
EOF
  cat >"$W/ds_slurm.sh" <<EOF
#!/bin/bash
#SBATCH --nodes=2
exec "$ACCEL" launch --config_file "$W/ds_slurm.yaml" --num_machines 2 --no_python \
  sh -c 'echo "slurm ds rank \$RANK of \$WORLD_SIZE deepspeed=\$ACCELERATE_USE_DEEPSPEED"'
EOF
  id=$(cd "$W" && ACCEL_NVML_LIBRARY=$BUILD/lib/libfake_nvml.so FAKE_NVML_GPUS=2 \
         slurm_submit "$W/ds_slurm.out" --time=5 "$W/ds_slurm.sh") || { fail "sbatch of the DeepSpeed slurm job"; return 0; }
  res=$(slurm_wait_job "$id" "$JOB_TIMEOUT") || true
  say "DeepSpeed config, deepspeed_multinode_launcher slurm, job $id: $res"
  indent <"$W/ds_slurm.out" || true
  if [ "$res" = "COMPLETED 0:0" ]; then pass "DeepSpeed slurm launcher job completed"; else fail "DeepSpeed slurm job: $res"; fi
  grep -q "one launcher per node through srun" "$W/ds_slurm.out" && pass "accel started the nodes' launchers with srun" ||
    fail "no 'one launcher per node through srun' note"
  for r in 0 1 2 3; do
    if grep -q "^\[h$((r / 2)):rank $r\] slurm ds rank $r of 4 deepspeed=true" "$W/ds_slurm.out"; then
      pass "DeepSpeed rank $r ran on h$((r / 2))"
    else
      fail "no line '[h$((r / 2)):rank $r] slurm ds rank $r of 4 deepspeed=true'"
    fi
  done
}
