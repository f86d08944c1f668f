#!/bin/bash
# probe.sh -- one task of the SLURM cluster test's placement job: prints what
# the task sees of its placement, all of it from SLURM's own variables (set by
# slurmd/slurmstepd on that node) and from the host itself (hostname, address).
set -u
ip=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{split($4, a, "/"); print a[1]}')
echo "PROBE host=$(hostname) nodename=${SLURMD_NODENAME:-} nodeid=${SLURM_NODEID:-}" \
     "nnodes=${SLURM_NNODES:-} nodelist=${SLURM_JOB_NODELIST:-} procid=${SLURM_PROCID:-}" \
     "localid=${SLURM_LOCALID:-} ntasks=${SLURM_NTASKS:-} stepid=${SLURM_STEP_ID:-} ip=${ip:-none}"
