# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# elastic_cases.sh - the cases of cluster_test.sh in which machines come and go (--nnodes
# MIN:MAX through a c10d endpoint on host 0, lib/launch/job/job_hub.h). accel-train checkpoints
# every 5 steps into a folder every host sees and resumes from the latest in every round;
# checkpoints load under a new world size (runtime/checkpoint/checkpoint_resume.h).
#   elastic_loss   --nnodes 2:3 on hosts 0-2 x 2: host 2's link goes down after checkpoint 10;
#                  hosts 0 and 1 go on from the latest checkpoint K with world 4; then host 3
#                  joins and the next round has world 6 again, from checkpoint K2. The weights
#                  CRC equals three emulated static runs split at K and K2 (world 6, 4, 6).
#   elastic_spare  --nnodes 2:2 on hosts 0-2 x 2: host 2 is a spare; host 1's launcher is
#                  SIGKILLed; host 2 takes its place, world 4 throughout, and the CRC equals an
#                  uninterrupted run's.
#   elastic_accelerate  a real Accelerate script's save_state/load_state across a host's loss, its
#                  loss equal to static runs split where it resumed (needs the peers' venv:
#                  tests/peers/check_elastic_accelerate.py runs it)
#   elastic_etcd   --rdzv_backend etcd with --nnodes 2:3 on hosts 0-2 x 2, etcd on host 3 (whose
#                  link stays up): machine 0's host (whichever etcd elected) loses its link after
#                  checkpoint 10; the other two elect a new machine 0 and go on from checkpoint K
#                  with world 4; the CRC equals static runs split at K (world 6, then 4).
#   elastic_pods   PyTorchJob elastic pods (PET_NNODES=1:3, PET_RDZV_BACKEND=c10d,
#                  PET_RDZV_ENDPOINT naming pod 0, no node rank) x 1: pod 2's link goes down,
#                  pods 0 and 1 finish.
# Sourced by cluster_test.sh (its on_host_bg, wait_hosts, layout_run, crc_in, show_logs,
# take_port, expect_in, expect_exit, wait_until, hosts_empty_now, $work, $build).
# The cases are called through run_case, which shellcheck cannot follow.
# shellcheck disable=SC2317,SC2154

ELASTIC_STEPS=60
ELASTIC_SHORT=40    # the cases that act once, at checkpoint 10
ELASTIC_PAUSE=0.15   # seconds per step at least: time to act between checkpoints

# elastic_host TAG K NNODES NPROC ARGS...: host K's launcher of an elastic job whose endpoint is
# host 0, NPROC workers; its log $work/TAG.hK.log.
elastic_host() {
  local tag=$1 k=$2 nnodes=$3 nproc=$4
  shift 4
  on_host_bg "$k" timeout -k 5 150 "$build/bin/accel" launch --cpu --quiet --grace_period 3 --nnodes "$nnodes" \
    --nproc_per_node "$nproc" --rdzv_backend c10d --rdzv_endpoint "$(host_addr 0):$port" --heartbeat_timeout 3 \
    --rdzv_conf last_call_timeout=2 "$@" >"$work/$tag.h$k.log" 2>&1
  HOST_OF[$CLUSTER_LAST_PID]=$k
}

# elastic_train DIR [STEPS]: accel-train, checkpointing into DIR and resuming from it in every
# round, for STEPS steps (ELASTIC_STEPS).
elastic_train() {
  echo "$build/bin/accel-train" --steps "${2:-$ELASTIC_STEPS}" --log_every 0 --checkpoint_every 5 --checkpoint_dir \
    "$1" --resume --step_pause "$ELASTIC_PAUSE"
}

# static_runs TAG STEPS:HOSTS:WORLD...: the static runs an elastic one is compared with, each up
# to STEPS on HOSTS emulated hosts with WORLD processes, resuming from the one before it through
# $work/TAG.ck; the last one's log is $work/TAG.log.
static_runs() {
  local tag=$1 seg steps hosts world name resume=() n=0
  shift
  mkdir -p "$work/$tag.ck"
  for seg; do
    IFS=: read -r steps hosts world <<<"$seg"
    n=$((n + 1))
    (($# == n)) && name=$tag || name=$tag$n
    layout_run "$name" "$hosts" "$world" "$build/bin/accel-train" --steps "$steps" --log_every 0 \
      --checkpoint_every "$steps" --checkpoint_dir "$work/$tag.ck" "${resume[@]}" ||
      { echo "the static reference runs failed"; show_logs "$tag"; return 1; }
    resume=(--resume)
  done
}

# in_log FILE TEXT [N]: TEXT appears at least N (1) times in FILE.
in_log() { (($(grep -cF -- "$2" "$1" 2>/dev/null) >= ${3:-1})); }

# resumed_step FILE [N]: the step of the Nth (last) "resumed from step K" in FILE.
resumed_step() { sed -n 's/.*resumed from step \([0-9]*\) .*/\1/p' "$1" | sed -n "${2:-\$}p"; }

case_elastic_loss() {
  local bad=0 t0 k1 k2 got want
  take_port
  mkdir -p "$work/elck"
  # shellcheck disable=SC2046
  for k in 0 1 2; do elastic_host loss "$k" 2:3 2 $(elastic_train "$work/elck"); done
  wait_until 60 in_log "$work/loss.h0.log" "checkpoint saved at step 10" ||
    { echo "no checkpoint 10"; stop_hosts; show_logs loss; return 1; }
  t0=$EPOCHREALTIME
  cluster_link_down 2
  wait_until 60 in_log "$work/loss.h0.log" "resumed from step" ||
    { echo "hosts 0 and 1 did not resume"; cluster_link_up 2; stop_hosts; show_logs loss; return 1; }
  echo "host 2's link down: the next round's workers resumed after $(since "$t0") s (heartbeat timeout 3 s)"
  k1=$(resumed_step "$work/loss.h0.log" 1)
  wait_until 60 in_log "$work/loss.h0.log" "checkpoint saved at step $((k1 + 10))" ||
    { echo "round 1 saved no checkpoint"; cluster_link_up 2; stop_hosts; show_logs loss; return 1; }
  # shellcheck disable=SC2046
  elastic_host loss 3 2:3 2 $(elastic_train "$work/elck")
  wait_hosts || true
  cluster_link_up 2
  hosts_empty_now || bad=1
  for k in 0 1 3; do expect_exit "$k" 0 120 "$t0"; done
  expect_exit 2 1 30 "$t0"
  expect_in "$work/loss.h0.log" "round 0: 3 machines" "was lost" "round 1: 2 machines" "world size 4" \
    "joined: ending round 1 to form one with it" "round 2: 3 machines" "world size 6" \
    "the checkpoint was saved by 6 processes, this run has 4" "the checkpoint was saved by 4 processes, this run has 6"
  grep -q "restarting all workers" "$work/loss.h0.log" && { echo "a change of machines counted as a restart"; bad=1; }
  k2=$(resumed_step "$work/loss.h0.log" 2)
  echo "resumed at step $k1 with 2 hosts, at step $k2 with 3"
  [[ -n $k1 && -n $k2 ]] || { show_logs loss; return 1; }
  static_runs elref "$k1:3:6" "$k2:2:4" "$ELASTIC_STEPS:3:6" || return 1
  got=$(crc_in "$work/loss.h0.log")
  want=$(crc_in "$work/elref.log")
  echo "weights crc32: elastic = $got, static runs split at $k1 and $k2 = $want"
  [[ -n $got && $got == "$want" ]] || bad=1
  ((bad == 0)) || { show_logs loss; return 1; }
}

case_elastic_spare() {
  local bad=0 t0 launcher got want
  take_port
  mkdir -p "$work/spck"
  # shellcheck disable=SC2046
  for k in 0 1; do elastic_host spare "$k" 2:2 2 $(elastic_train "$work/spck" "$ELASTIC_SHORT"); done
  wait_until 60 in_log "$work/spare.h0.log" "round 0: 2 machines" || { stop_hosts; show_logs spare; return 1; }
  # shellcheck disable=SC2046
  elastic_host spare 2 2:2 2 $(elastic_train "$work/spck" "$ELASTIC_SHORT")
  wait_until 30 in_log "$work/spare.h0.log" "joined as a spare" || { stop_hosts; show_logs spare; return 1; }
  wait_until 60 in_log "$work/spare.h0.log" "checkpoint saved at step 10" || { stop_hosts; show_logs spare; return 1; }
  launcher=$(pgrep -P "$(host_pid 1)" -x accel) || { echo "no launcher on host 1"; stop_hosts; return 1; }
  t0=$EPOCHREALTIME
  kill -KILL "$launcher"
  wait_hosts || true
  hosts_empty_now || bad=1
  for k in 0 2; do expect_exit "$k" 0 120 "$t0"; done
  expect_exit 1 137 5 "$t0"
  expect_in "$work/spare.h0.log" "joined as a spare" "machine 1 (" "was lost" "round 1: 2 machines" "world size 4"
  grep -q "world size [^4]" "$work/spare.h0.log" && { echo "the world size changed"; bad=1; }
  layout_run spareref 2 4 "$build/bin/accel-train" --steps "$ELASTIC_SHORT" --log_every 0 ||
    { echo "the uninterrupted reference failed"; return 1; }
  got=$(crc_in "$work/spare.h0.log")
  want=$(crc_in "$work/spareref.log")
  echo "weights crc32: a spare took host 1's place = $got, uninterrupted = $want"
  [[ -n $got && $got == "$want" ]] || bad=1
  ((bad == 0)) || { show_logs spare; return 1; }
}

# PyTorchJob with elasticPolicy minReplicas 1, maxReplicas 3: what its operator gives each pod.
elastic_pod_vars() {
  printf '%s\n' PET_NNODES=1:3 PET_RDZV_BACKEND=c10d "PET_RDZV_ENDPOINT=ep-worker-0:$port" PET_NPROC_PER_NODE=1 \
    PET_RDZV_CONF=last_call_timeout=2,keep_alive_interval=1,keep_alive_max_attempt=3
}
case_elastic_pods() {
  local bad=0 k t0
  image_config
  for k in 0 1 2; do cluster_names "$k" "ep-worker-$k"; done
  take_port
  mkdir -p "$work/epck"
  for k in 0 1 2; do
    mapfile -t vars < <(elastic_pod_vars "$k")
    # shellcheck disable=SC2046
    start_pod epods "$k" "${vars[@]}" -- $(elastic_train "$work/epck" "$ELASTIC_SHORT")
  done
  wait_until 60 in_log "$work/epods.h0.log" "checkpoint saved at step 10" || { stop_hosts; show_logs epods; return 1; }
  t0=$EPOCHREALTIME
  cluster_link_down 2
  wait_hosts || true
  cluster_link_up 2
  hosts_empty_now || bad=1
  for k in 0 1; do expect_exit "$k" 0 120 "$t0"; done
  expect_in "$work/epods.h0.log" "PyTorchJob v1 with elasticPolicy" "round 0: 3 machines" "was lost" \
    "round 1: 2 machines" "world size 2" "after $ELASTIC_SHORT steps (2 processes"
  ((bad == 0)) || { show_logs epods; return 1; }
}

# elastic_accelerate: tests/peers/elastic_accelerate.py (real Accelerate and torch 2.15 from the
# peers' venv, ACCEL_PEERS_PYTHON; run through tests/peers/check_elastic_accelerate.py once
# scripts/peers has made it) with --nnodes 2:3 on hosts 0-2 x 1: host 2's link goes down after
# step 10 was saved; hosts 0 and 1 load_state and finish. Its final eval loss and weights equal
# two static runs split where it resumed (world 3 to K, then world 2 from K).
case_elastic_accelerate() {
  local bad=0 t0 k got want
  take_port
  mkdir -p "$work/acck" "$work/accref"
  local script=(--no_python "$ACCEL_PEERS_PYTHON" "$root/tests/peers/elastic_accelerate.py" --steps 24 --every 5)
  for k in 0 1 2; do elastic_host acc "$k" 2:3 1 "${script[@]}" --dir "$work/acck" --pause 0.25; done
  wait_until 90 in_log "$work/acc.h0.log" "saved step 10" || { echo "no step 10"; stop_hosts; show_logs acc; return 1; }
  t0=$EPOCHREALTIME
  cluster_link_down 2
  wait_hosts || true
  cluster_link_up 2
  hosts_empty_now || bad=1
  for k in 0 1; do expect_exit "$k" 0 150 "$t0"; done
  expect_in "$work/acc.h0.log" "round 1: 2 machines" "with 2 processes" "processes 2"
  k=$(sed -n 's/.*resumed at step \([0-9]*\) with 2 processes.*/\1/p' "$work/acc.h0.log" | head -n 1)
  echo "host 2's link down after step 10 was saved: hosts 0 and 1 resumed at step $k"
  [[ -n $k ]] || { show_logs acc; return 1; }
  layout_run accref3 3 3 --no_python "$ACCEL_PEERS_PYTHON" "$root/tests/peers/elastic_accelerate.py" --steps "$k" \
    --every "$k" --dir "$work/accref" &&
    layout_run accref2 2 2 "${script[@]}" --dir "$work/accref" ||
    { echo "the static reference runs failed"; show_logs accref; return 1; }
  got=$(grep -ho 'eval_loss .*' "$work/acc.h0.log" | tail -n 1)
  want=$(grep -ho 'eval_loss .*' "$work/accref2.log" | tail -n 1)
  echo "elastic: $got"
  echo "static runs split at step $k: $want"
  [[ -n $got && $got == "$want" ]] || bad=1
  ((bad == 0)) || { show_logs acc; return 1; }
}

# etcd_on_host K PORT: a one-member etcd on host K serving PORT (its peers on PORT+1); sets ETCD_PID.
etcd_on_host() {
  local url peer
  url="http://$(host_addr "$1"):$2"
  peer="http://$(host_addr "$1"):$(($2 + 1))"
  on_host_bg "$1" etcd --name one --data-dir "$work/etcd$2" --listen-client-urls "$url" \
    --advertise-client-urls "$url" --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "one=$peer" >"$work/etcd$2.log" 2>&1
  ETCD_PID=$CLUSTER_LAST_PID
  wait_until 30 in_log "$work/etcd$2.log" "ready to serve client requests" || { cat "$work/etcd$2.log"; return 1; }
}

stop_etcd() { { kill_tree "$ETCD_PID"; wait "$ETCD_PID"; } 2>/dev/null || true; }

case_elastic_etcd() {
  local bad=0 t0 k zero='' k1 got want
  command -v etcd >/dev/null || { echo "etcd-server is not installed (apt-get install etcd-server)"; return 77; }
  take_port
  etcd_on_host 3 "$port" || return 1
  mkdir -p "$work/etck"
  for k in 0 1 2; do
    # shellcheck disable=SC2046
    on_host_bg "$k" timeout -k 5 120 "$build/bin/accel" launch --cpu --quiet --grace_period 3 --nnodes 2:3 \
      --nproc_per_node 2 --rdzv_backend etcd --rdzv_endpoint "$(host_addr 3):$port" --rdzv_id etcd-case \
      --heartbeat_timeout 3 --rdzv_conf last_call_timeout=2 $(elastic_train "$work/etck" "$ELASTIC_SHORT") \
      >"$work/etcd.h$k.log" 2>&1
    HOST_OF[$CLUSTER_LAST_PID]=$k
  done
  # rank 0 runs on machine 0, whichever host etcd elected
  any_saved() { cat "$work"/etcd.h[012].log 2>/dev/null | grep -q "checkpoint saved at step 10"; }
  wait_until 60 any_saved || { echo "no checkpoint 10"; stop_hosts; stop_etcd; show_logs etcd; return 1; }
  for k in 0 1 2; do in_log "$work/etcd.h$k.log" "round 0: 3 machines" && zero=$k; done
  [[ -n $zero ]] || { echo "no machine 0 said round 0"; stop_hosts; stop_etcd; show_logs etcd; return 1; }
  t0=$EPOCHREALTIME
  cluster_link_down "$zero"
  local survivors=()
  for k in 0 1 2; do ((k == zero)) || survivors+=("$k"); done
  # rank 0 of the next round, on the new machine 0, says where the workers resumed
  survivors_resumed() { cat "$work/etcd.h${survivors[0]}.log" "$work/etcd.h${survivors[1]}.log" | grep -q "resumed from step"; }
  wait_until 60 survivors_resumed ||
    { echo "the survivors did not resume"; cluster_link_up "$zero"; stop_hosts; stop_etcd; show_logs etcd; return 1; }
  local first
  first=$(grep -l "resumed from step" "$work/etcd.h${survivors[0]}.log" "$work/etcd.h${survivors[1]}.log")
  echo "machine 0's host $zero lost its link: the survivors' workers resumed after $(since "$t0") s (heartbeat timeout 3 s)"
  wait_hosts || true
  cluster_link_up "$zero"
  stop_etcd
  hosts_empty_now || bad=1
  for k in "${survivors[@]}"; do
    expect_exit "$k" 0 120 "$t0"
    expect_in "$work/etcd.h$k.log" "is machine 0 now (elected in etcd at http://$(host_addr 3):$port)" \
      "round 1: world size 4"
  done
  expect_in "$first" "the checkpoint was saved by 6 processes, this run has 4"
  expect_exit "$zero" 1 60 "$t0"
  k1=$(resumed_step "$first" 1)
  [[ -n $k1 ]] || { show_logs etcd; return 1; }
  static_runs etref "$k1:3:6" "$ELASTIC_SHORT:2:4" || return 1
  got=$(crc_in "$first")
  want=$(crc_in "$work/etref.log")
  echo "weights crc32: machine 0 lost, elected again in etcd = $got, static runs split at $k1 = $want"
  [[ -n $got && $got == "$want" ]] || bad=1
  ((bad == 0)) || { show_logs etcd; return 1; }
}
