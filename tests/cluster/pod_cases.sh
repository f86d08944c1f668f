# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# pod_cases.sh - the cases of cluster_test.sh in which each host is a Kubernetes pod: it gets
# exactly the variables its operator gives its pod (lib/launch/settings/pod_convention.h), the pods' names
# resolve through each host's own hosts file, a default_config.yaml that says machine_rank 0 and
# one machine is present (as an image may ship one), and every host runs a bare
# `accel launch PROGRAM`. Sourced by cluster_test.sh (its on_host_bg, wait_hosts, layout_run,
# crc_in, show_logs, take_port, $work, $build).
#   trainer_v2      Kubeflow Trainer: PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR,
#                   PET_MASTER_PORT; 2 pods x 2
#   pytorchjob      PyTorchJob v1 without elasticPolicy (an operator before PET_NNODES): MASTER_ADDR,
#                   MASTER_PORT, RANK, WORLD_SIZE = pods, PET_NPROC_PER_NODE; 2 pods x 2
#   pytorchjob_elastic  PyTorchJob v1 with elasticPolicy min = max = 3: PET_NNODES, PET_RDZV_BACKEND
#                   c10d, PET_RDZV_ENDPOINT naming pod 0, no node rank; 3 pods x 1, ranks by join
#   uneven          3 hosts of 1, 2 and 3 processes (--nproc_per_node), world 6
# Each pod case: accel-train's weights CRC equals the same layout emulated on one host, and
# tests/python/ddp_gloo.py (Debian's torch) completes across the pods.
# The cases are called through run_case, which shellcheck cannot follow.
# shellcheck disable=SC2317,SC2154

POD_STEPS=30

# image_config: what an image may ship; a pod convention must win over it.
image_config() {
  mkdir -p "$HF_HOME/accelerate"
  printf 'compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_CPU\nuse_cpu: true\nnum_machines: 1\nmachine_rank: 0\nnum_processes: 1\nmixed_precision: "no"\n' \
    >"$HF_HOME/accelerate/default_config.yaml"
}

# start_pod TAG K VAR=VALUE... -- PROGRAM...: host K's bare `accel launch` with exactly those
# variables added to a clean environment.
start_pod() {
  local tag=$1 k=$2 vars=()
  shift 2
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  on_host_bg "$k" env "${vars[@]}" timeout -k 5 90 "$build/bin/accel" launch "$@" >"$work/$tag.h$k.log" 2>&1
  HOST_OF[$CLUSTER_LAST_PID]=$k
}

# pods TAG H VARS_FUNCTION: every pod's launcher, once for accel-train and once for ddp_gloo.py;
# VARS_FUNCTION K prints pod K's variables, one per line.
pods() {
  local tag=$1 h=$2 vars_of=$3 k program
  for program in train ddp; do
    take_port
    for ((k = 0; k < h; k++)); do
      mapfile -t vars < <("$vars_of" "$k")
      if [[ $program == train ]]; then
        start_pod "$tag.$program" "$k" "${vars[@]}" -- "$build/bin/accel-train" --steps "$POD_STEPS" --log_every 0
      else
        start_pod "$tag.$program" "$k" "${vars[@]}" ACCEL_PYTHON=/usr/bin/python3 -- "$root/tests/python/ddp_gloo.py"
      fi
    done
    wait_hosts || { echo "the pods' $program run failed"; show_logs "$tag.$program"; return 1; }
  done
}

# check_pods TAG WORLD REF_TAG: the CRC against the emulated layout's, DDP's verdict, the
# convention named.
check_pods() {
  local tag=$1 world=$2 ref=$3 got want
  got=$(crc_in "$work/$tag.train.h0.log")
  want=$(crc_in "$work/$ref.log")
  grep -q "after $POD_STEPS steps ($world processes" "$work/$tag.train.h0.log" ||
    { echo "pod 0 does not report $world processes"; show_logs "$tag.train"; return 1; }
  echo "weights crc32: pods = $got, the same layout emulated on one host = $want"
  [[ -n $got && $got == "$want" ]] || { show_logs "$tag.train"; return 1; }
  grep -q "rank 0\] ddp_gloo ok world_size=$world" "$work/$tag.ddp.h0.log" ||
    { echo "rank 0 did not report ddp_gloo ok world_size=$world"; show_logs "$tag.ddp"; return 1; }
  grep -h 'Kubernetes pod' "$work/$tag.train.h0.log" || true
}

pod_python() {
  /usr/bin/python3 -c 'import torch' 2>/dev/null && return 0
  echo "Debian's python3-torch is not installed for /usr/bin/python3"
  return 1
}

trainer_vars() {
  printf '%s\n' PET_NNODES=2 PET_NPROC_PER_NODE=2 "PET_NODE_RANK=$1" PET_MASTER_ADDR=tj-node-0-0.tj \
    "PET_MASTER_PORT=$port"
}
case_trainer_v2() {
  pod_python || return 77
  image_config
  cluster_names 0 tj-node-0-0.tj
  cluster_names 1 tj-node-0-1.tj
  layout_run podref4 2 4 "$build/bin/accel-train" --steps "$POD_STEPS" --log_every 0 || return 1
  pods trainer 2 trainer_vars && check_pods trainer 4 podref4 &&
    grep -q 'Kubeflow Trainer v2 convention' "$work/trainer.train.h1.log"
}

pytorchjob_vars() {
  printf '%s\n' KUBERNETES_SERVICE_HOST=10.96.0.1 MASTER_ADDR=pj-master-0 "MASTER_PORT=$port" "RANK=$1" WORLD_SIZE=2 PET_NPROC_PER_NODE=2
}
case_pytorchjob() {
  pod_python || return 77
  image_config
  cluster_names 0 pj-master-0
  cluster_names 1 pj-worker-0
  layout_run podref4 2 4 "$build/bin/accel-train" --steps "$POD_STEPS" --log_every 0 || return 1
  pods pytorchjob 2 pytorchjob_vars && check_pods pytorchjob 4 podref4 &&
    grep -q 'PyTorchJob v1 convention' "$work/pytorchjob.train.h1.log"
}

elastic_vars() {
  printf '%s\n' PET_NNODES=3:3 PET_RDZV_BACKEND=c10d "PET_RDZV_ENDPOINT=ej-worker-0:$port" PET_NPROC_PER_NODE=1
}
case_pytorchjob_elastic() {
  pod_python || return 77
  image_config
  cluster_names 0 ej-worker-0
  cluster_names 1 ej-worker-1
  cluster_names 2 ej-worker-2
  layout_run podref3 3 3 "$build/bin/accel-train" --steps "$POD_STEPS" --log_every 0 || return 1
  pods elastic 3 elastic_vars && check_pods elastic 3 podref3 || return 1
  on_host 1 env PET_NNODES=3 PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT=ej-worker-0:29400 \
    "$build/bin/accel" launch --dry_run /bin/true >"$work/elastic.dry.log" 2>&1 || true
  grep 'machine_rank=-1 (assigned by machine 0' "$work/elastic.dry.log" ||
    { echo "pod 1's dry run does not say its rank is given out at the join"; cat "$work/elastic.dry.log"; return 1; }
}

# uneven: 3 hosts of 1, 2 and 3 processes, through torchrun's flags, against the same layout on
# one host (emulated_uneven) and its CRC.
emulated_uneven() {
  local accel=$1 work=$2 k pids=() rc=0
  shift 2
  ip link set lo up || return 1
  for k in 0 1 2; do
    ACCEL_HOST_ID=emulated-$k timeout -k 5 60 "$accel" launch --cpu --quiet --nnodes 3 --node_rank "$k" \
      --nproc_per_node $((k + 1)) --master_addr 127.0.0.1 --master_port 29500 "$@" \
      >"$work/unevenref$([[ $k == 0 ]] || echo ".m$k").log" 2>&1 &
    pids+=($!)
  done
  for k in "${pids[@]}"; do wait "$k" || rc=$?; done
  return "$rc"
}
case_uneven() {
  local k got want
  unshare --net -- bash -c "$(declare -f emulated_uneven); emulated_uneven \"\$@\"" emulated_uneven \
    "$build/bin/accel" "$work" "$build/bin/accel-train" --steps "$POD_STEPS" --log_every 0 ||
    { echo "the one-host reference failed"; show_logs unevenref; return 1; }
  take_port
  for k in 0 1 2; do
    on_host_bg "$k" timeout -k 5 90 "$build/bin/accel" launch --cpu --quiet --nnodes 3 --node_rank "$k" \
      --nproc_per_node $((k + 1)) --master_addr "$(host_addr 0)" --master_port "$port" \
      "$build/bin/accel-train" --steps "$POD_STEPS" --log_every 0 >"$work/uneven.h$k.log" 2>&1
    HOST_OF[$CLUSTER_LAST_PID]=$k
  done
  wait_hosts || { echo "the 3-host run failed"; show_logs uneven; return 1; }
  got=$(crc_in "$work/uneven.h0.log")
  want=$(crc_in "$work/unevenref.log")
  grep -q "after $POD_STEPS steps (6 processes" "$work/uneven.h0.log" ||
    { echo "host 0 does not report 6 processes"; show_logs uneven; return 1; }
  echo "weights crc32: hosts of 1, 2, 3 processes = $got, the same layout emulated on one host = $want"
  [[ -n $got && $got == "$want" ]]
}
