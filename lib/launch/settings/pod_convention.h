// SPDX-License-Identifier: Apache-2.0
// The Kubernetes operators' conventions, recognised from a pod's environment, so that a bare
// `accel launch train.py` in every pod of a job forms that one job:
//   - Kubeflow Trainer v2 (kubeflow/trainer, its torch plugin): PET_NNODES, PET_NPROC_PER_NODE,
//     PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT; torchrun's PET_* defaults
//     (torchrun_args.h) already mean the job, so this only names it;
//   - PyTorchJob v1 without elasticPolicy (training-operator's envvar.go): MASTER_ADDR,
//     MASTER_PORT, RANK, WORLD_SIZE, and no LOCAL_RANK, in a pod (KUBERNETES_SERVICE_HOST, which
//     Kubernetes gives every container; never inside a SLURM job, whose scripts often export the
//     same four): the pod's RANK is its machine rank and
//     WORLD_SIZE its machine count (unless PET_NNODES says; newer operators set WORLD_SIZE to
//     machines × nprocPerNode and PET_NNODES beside it). These pod-level values are never passed
//     to the workers as process ranks;
//   - PyTorchJob v1 with elasticPolicy (elastic.go): PET_RDZV_ENDPOINT and PET_NNODES, no node
//     rank: the pod the endpoint's host names is machine 0, the others are numbered as they
//     join (torchrun_args.h's endpoint_host).
// ACCEL_K8S=0 turns the recognition off (torchrun's PET_* defaults still apply, as in torchrun).
// Pure. Throws UsageError naming a variable whose value is not what the convention says.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/settings/torchrun_args.h"

namespace accel::launch::settings {

struct PodConvention {
  std::string name;                     // "Kubeflow Trainer v2", …
  std::vector<std::string> variables;   // what it read, "NAME=value"
  std::map<std::string, Sourced> keys;  // config keys it sets (below the command line)
  std::vector<std::string> unset;       // pod-level variables the workers must not inherit
};

std::optional<PodConvention> detectPodConvention(const std::map<std::string, std::string>& env);

}  // namespace accel::launch::settings
