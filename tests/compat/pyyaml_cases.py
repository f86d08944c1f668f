"""The cases of the PyYAML compatibility check (pyyaml_compat.py): b) files written the way
Accelerate's wizard, `config update` and `config default` write them; c) input that PyYAML
misreads but accel must handle."""

import copy

WIZARD_BASE = {
    "compute_environment": "LOCAL_MACHINE",
    "debug": False,
    "downcast_bf16": "no",
    "enable_cpu_affinity": False,
    "machine_rank": 0,
    "main_training_function": "main",
    "num_machines": 1,
    "rdzv_backend": "static",
    "same_network": True,
    "tpu_env": [],
    "tpu_use_cluster": False,
    "tpu_use_sudo": False,
    "use_cpu": False,
}


def wizard(**kw):
    d = copy.deepcopy(WIZARD_BASE)
    d.update(kw)
    return d


def build_cases():
    """(name, data, fmt, legacy).  fmt: 'yaml' (safe_dump into .yaml),
    'json_as_yaml' (json.dumps into .yaml, like `accelerate config default`),
    'json' (json.dumps into .json)."""
    cases = []

    # A wizard session: no distributed training, Enter everywhere.
    cases.append(("no_distributed", wizard(
        distributed_type="NO", gpu_ids="all", mixed_precision="no", num_processes=1), "yaml", False))

    # A wizard session: CPU only.
    cases.append(("no_distributed_cpu_only", wizard(
        distributed_type="NO", mixed_precision="no", num_processes=1, use_cpu=True), "yaml", False))

    # A wizard session: multi-GPU, 4 GPUs, fp16; specific GPU ids.
    cases.append(("multi_gpu_fp16", wizard(
        distributed_type="MULTI_GPU", gpu_ids="0,1,2,3", mixed_precision="fp16", num_processes=4,
        enable_cpu_affinity=True), "yaml", False))

    # A wizard session: multi-CPU with mpirun.
    cases.append(("multi_cpu_mpirun", wizard(
        distributed_type="MULTI_CPU", mixed_precision="no", num_processes=4, use_cpu=True,
        mpirun_config={"mpirun_hostfile": "/home/user/hostfile"}), "yaml", False))

    # A wizard session: two machines of 8 GPUs, bf16, rank 0.
    cases.append(("two_machines_bf16", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="bf16", num_processes=16,
        num_machines=2, main_process_ip="10.0.0.1", main_process_port=29500), "yaml", False))

    # Two machines, not on the same network, c10d rendezvous, rank 1, a host
    # name instead of an IP and port 0 ("pick a free port").
    cases.append(("two_machines_c10d_rank1", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="bf16", num_processes=16,
        num_machines=2, machine_rank=1, main_process_ip="node-0.cluster.local", main_process_port=0,
        rdzv_backend="c10d", same_network=False), "yaml", False))

    # A single GPU id must stay a quoted string ('1'), never an int (Accelerate reads a string).
    cases.append(("no_distributed_single_gpu_id", wizard(
        distributed_type="NO", gpu_ids="1", mixed_precision="bf16", num_processes=1), "yaml", False))

    # A wizard session: DeepSpeed ZeRO-3, CPU offload, clipping 1.0, 16-bit save, zero.Init.
    cases.append(("deepspeed_zero3", wizard(
        distributed_type="DEEPSPEED", mixed_precision="bf16", num_processes=4,
        deepspeed_config={
            "gradient_accumulation_steps": 1,
            "gradient_clipping": 1.0,
            "offload_optimizer_device": "cpu",
            "offload_param_device": "cpu",
            "zero3_init_flag": True,
            "zero3_save_16bit_model": True,
            "zero_stage": 3,
        }), "yaml", False))

    # A wizard session: multi-node DeepSpeed with pdsh, NVMe offload, MoE.
    cases.append(("deepspeed_multinode_pdsh", wizard(
        distributed_type="DEEPSPEED", mixed_precision="bf16", num_processes=16, num_machines=2,
        main_process_ip="10.0.0.1", main_process_port=29500,
        deepspeed_config={
            "deepspeed_exclusion_filter": "worker-1:0",
            "deepspeed_hostfile": "/home/user/hostfile",
            "deepspeed_inclusion_filter": "worker-0@worker-1:0,2",
            "deepspeed_moe_layer_cls_names": "MixtralSparseMoeBlock",
            "deepspeed_multinode_launcher": "pdsh",
            "gradient_accumulation_steps": 8,
            "gradient_clipping": 0.5,
            "offload_optimizer_device": "nvme",
            "offload_optimizer_nvme_path": "/nvme",
            "offload_param_device": "nvme",
            "offload_param_nvme_path": "/nvme",
            "zero3_init_flag": True,
            "zero3_save_16bit_model": False,
            "zero_stage": 3,
        }), "yaml", False))

    # A wizard session: DeepSpeed with a JSON file: no mixed_precision key at all.
    cases.append(("deepspeed_json_file", wizard(
        distributed_type="DEEPSPEED", num_processes=4,
        deepspeed_config={
            "deepspeed_config_file": "/home/user/ds_config.json",
            "zero3_init_flag": False,
        }), "yaml", False))

    # A wizard session: FSDP version 1.
    cases.append(("fsdp_v1", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=4,
        fsdp_config={
            "fsdp_activation_checkpointing": False,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_backward_prefetch": "BACKWARD_PRE",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_forward_prefetch": False,
            "fsdp_offload_params": False,
            "fsdp_reshard_after_forward": "FULL_SHARD",
            "fsdp_state_dict_type": "FULL_STATE_DICT",
            "fsdp_sync_module_states": True,
            "fsdp_transformer_layer_cls_to_wrap": "BertLayer",
            "fsdp_use_orig_params": True,
            "fsdp_version": 1,
        }), "yaml", False))

    # A wizard session: FSDP version 2 with size-based wrapping.
    cases.append(("fsdp_v2", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=4,
        fsdp_config={
            "fsdp_activation_checkpointing": True,
            "fsdp_auto_wrap_policy": "SIZE_BASED_WRAP",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_min_num_params": 100000000,
            "fsdp_offload_params": True,
            "fsdp_reshard_after_forward": True,
            "fsdp_state_dict_type": "SHARDED_STATE_DICT",
            "fsdp_version": 2,
        }), "yaml", False))

    # A wizard session: FSDP2 plus parallelism_config.
    cases.append(("fsdp_v2_parallelism_config", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=8,
        fsdp_config={
            "fsdp_activation_checkpointing": False,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_offload_params": False,
            "fsdp_reshard_after_forward": True,
            "fsdp_state_dict_type": "SHARDED_STATE_DICT",
            "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer",
            "fsdp_version": 2,
        },
        parallelism_config={
            "parallelism_config_cp_comm_strategy": "alltoall",
            "parallelism_config_cp_size": 2,
            "parallelism_config_dp_replicate_size": 1,
            "parallelism_config_dp_shard_size": 2,
            "parallelism_config_tp_size": 2,
        }), "yaml", False))

    # A wizard session: dynamo with all five keys.
    cases.append(("dynamo_config", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="no", num_processes=2,
        dynamo_config={
            "dynamo_backend": "INDUCTOR",
            "dynamo_mode": "max-autotune",
            "dynamo_use_dynamic": True,
            "dynamo_use_fullgraph": False,
            "dynamo_use_regional_compilation": True,
        }), "yaml", False))

    # A wizard session: fp8 with Transformer Engine, as the wizard writes it.
    cases.append(("fp8_te", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="fp8", num_processes=2,
        fp8_config={
            "amax_compute_algorithm": "max",
            "amax_history_length": 1024,
            "backend": "TE",
            "fp8_format": "HYBRID",
            "interval": 1,
            "margin": 0,
            "override_linear_precision": [False, True, False],
            "use_autocast_during_eval": False,
        }), "yaml", False))

    # A wizard session: fp8 with MS-AMP (optimization_level -> opt_level).
    cases.append(("fp8_msamp", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="fp8", num_processes=2,
        fp8_config={"backend": "MSAMP", "optimization_level": "O2"}), "yaml", False))

    # A wizard session: fp8 with torchao.
    cases.append(("fp8_ao", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="fp8", num_processes=2,
        fp8_config={"backend": "AO", "enable_fsdp_float8_all_gather": True, "pad_inner_dim": True}),
        "yaml", False))

    # A wizard session: Megatron-LM.
    cases.append(("megatron_lm", wizard(
        distributed_type="MEGATRON_LM", mixed_precision="bf16", num_processes=8,
        megatron_lm_config={
            "megatron_lm_gradient_clipping": 1.0,
            "megatron_lm_num_micro_batches": 2,
            "megatron_lm_pp_degree": 2,
            "megatron_lm_recompute_activations": True,
            "megatron_lm_sequence_parallelism": True,
            "megatron_lm_tp_degree": 2,
            "megatron_lm_use_distributed_optimizer": True,
        }), "yaml", False))

    # A wizard session: TPU cluster.  tpu_use_sudo is stored as the raw answer string
    # by the wizard (no converter), so 'yes' must survive as a str.
    cases.append(("xla_tpu_cluster", wizard(
        distributed_type="XLA", mixed_precision="no", num_processes=8,
        main_training_function="train_fn", tpu_use_cluster=True, tpu_use_sudo="yes",
        tpu_name="my-tpu", tpu_zone="us-central1-a",
        commands=["pip install accelerate", "echo done"],
        tpu_vm=["tpu-vm-0", "tpu-vm-1"], tpu_env=["FOO=1", "BAR=2"]), "yaml", False))

    # A wizard session: mpirun hostfile under a home directory with a non-ASCII name
    # (PyYAML escapes it as "\xE9").
    cases.append(("multi_cpu_mpirun_non_ascii_path", wizard(
        distributed_type="MULTI_CPU", mixed_precision="no", num_processes=4, use_cpu=True,
        mpirun_config={"mpirun_hostfile": "/home/jos\u00e9/hostfile"}), "yaml", False))

    # Long plain strings: PyYAML's emitter folds plain scalars at spaces once
    # a line passes 80 columns (best_width), e.g. a TPU startup command or a
    # layer-class list written with ", ".
    cases.append(("long_strings_folded_by_pyyaml", wizard(
        distributed_type="XLA", mixed_precision="no", num_processes=8,
        tpu_use_cluster=True, tpu_name="my-tpu", tpu_zone="us-central1-a",
        commands=["pip install accelerate transformers datasets evaluate && "
                  "git clone https://github.com/huggingface/accelerate && cd accelerate"]), "yaml", False))
    cases.append(("long_layer_list_folded_by_pyyaml", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=4,
        fsdp_config={
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_transformer_layer_cls_to_wrap":
                "BertLayer, BertEmbeddings, BertSelfOutput, BertIntermediate, BertOutput, BertPooler",
            "fsdp_version": 2,
        }), "yaml", False))

    # An old file: legacy fp16 + top-level dynamo_backend (what `accelerate config update` converts).
    cases.append(("legacy_fp16_dynamo_backend", {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": "MULTI_GPU",
        "dynamo_backend": "INDUCTOR",
        "fp16": True,
        "machine_rank": 0,
        "main_training_function": "main",
        "num_machines": 1,
        "num_processes": 2,
        "use_cpu": False,
    }, "yaml", True))

    # Legacy with dynamo_backend 'NO': becomes an empty dynamo_config (dropped).
    cases.append(("legacy_fp16_dynamo_backend_NO", {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": "MULTI_GPU",
        "dynamo_backend": "NO",
        "fp16": True,
        "num_processes": 2,
    }, "yaml", True))

    # `accelerate config default` writes JSON even into a .yaml name.
    default_json = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "distributed_type": "MULTI_GPU",
        "downcast_bf16": False,
        "enable_cpu_affinity": False,
        "machine_rank": 0,
        "main_training_function": "main",
        "mixed_precision": "no",
        "num_machines": 1,
        "num_processes": 4,
        "rdzv_backend": "static",
        "same_network": False,
        "tpu_use_cluster": False,
        "tpu_use_sudo": False,
        "use_cpu": False,
    }
    cases.append(("config_default_json_in_yaml_name", default_json, "json_as_yaml", False))
    # The same content under a .json name is read and written as JSON.
    cases.append(("config_default_json_file", copy.deepcopy(default_json), "json", False))
    # A .json config whose float Python's json module writes with an exponent
    # and no dot (repr(1e-05) == '1e-05'): a JSON number, not a string.
    cases.append(("json_file_exponent_float", wizard(
        distributed_type="DEEPSPEED", mixed_precision="bf16", num_processes=2,
        deepspeed_config={"gradient_accumulation_steps": 1, "gradient_clipping": 1e-05,
                          "zero3_init_flag": False, "zero_stage": 2}), "json", False))
    return cases


BAD_INPUTS = [
    # (name, raw text, {key: expected string after update})
    ("bare_NO_and_no",
     "distributed_type: NO\nmixed_precision: no\n",
     {"distributed_type": "NO", "mixed_precision": "no"}),
    ("bare_NO_and_no_full_file",
     "compute_environment: LOCAL_MACHINE\n"
     "debug: false\n"
     "distributed_type: NO\n"
     "gpu_ids: all\n"
     "machine_rank: 0\n"
     "mixed_precision: no\n"
     "num_machines: 1\n"
     "num_processes: 1\n"
     "use_cpu: false\n",
     {"distributed_type": "NO", "mixed_precision": "no", "gpu_ids": "all"}),
    # Accelerate's own examples/config_yaml_templates/single_accelerator.yaml
    ("double_quoted_minimal_example",
     'distributed_type: "NO"\nmixed_precision: "bf16"\n',
     {"distributed_type": "NO", "mixed_precision": "bf16"}),
]
