# SPDX-License-Identifier: Apache-2.0
# launch_cases.py - what check_launch_parity.py launches under both launchers: each template of
# config-templates/ as a user runs it, and Accelerate 1.15's launch flags in groups (every flag
# of tests/compat/accelerate_1_15_launch_flags.txt is in a case, or in NOT_LAUNCHED with why).
import dataclasses
import os
import random
import re
import socket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS_FILE = os.path.join(ROOT, "tests", "compat", "accelerate_1_15_launch_flags.txt")


def free_port():
    """A port P with P and P + 1 free (accel's job channel takes P + 1 on two machines), drawn below
    the ephemeral range, where no outgoing connection of another test can take P + 1 meanwhile."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    for _ in range(200):
        port = random.randrange(10000, low - 1)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
            return str(port)
        except OSError:
            continue
    raise RuntimeError("no two free neighbouring ports below the ephemeral range")


@dataclasses.dataclass
class Case:
    name: str
    config: str = ""  # a file under ROOT
    args: list = dataclasses.field(default_factory=list)
    machines: int = 1  # > 1: one launcher per machine rank, all on this host
    form: str = "script"  # script | module | no_python
    gpus: int = 8  # accel's fake NVML shows this many GPUs; None: this machine as it is (no GPU here)
    edits: dict = dataclasses.field(default_factory=dict)  # config keys ("section.key") changed in a copy

    @property
    def slug(self):
        return re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_")

    def program(self, probe, out):
        if self.form == "module":
            return ["--module", "probe_worker", out]
        if self.form == "no_python":
            return ["--no_python", "python3", probe, out]
        return [probe, out]

    def cwd(self, root):  # --module imports probe_worker from the working directory
        return os.path.join(root, "tests", "peers") if self.form == "module" else root


def hostfile():
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "accel-peers-hostfile")
    with open(path, "w") as f:
        f.write("localhost slots=2\n")
    return path


# Two workers where the template has more: the environment and state of every rank are still
# compared, and this machine has 2 cores. Two machines: both machine ranks on this host, with the
# template's main_process_ip replaced by loopback.
TWO = ["--num_processes", "2"]
CASES = [
    Case("template single_gpu", "config-templates/single_gpu.yaml"),
    Case("template multi_gpu_bf16", "config-templates/multi_gpu_bf16.yaml", TWO),
    Case("template two_machines", "config-templates/two_machines.yaml",
         ["--num_processes", "4", "--main_process_ip", "127.0.0.1", "--main_process_port", free_port()], machines=2),
    # Accelerate runs several CPU processes only through mpirun: both are given a hostfile.
    Case("template multi_cpu", "config-templates/multi_cpu.yaml", [*TWO, "--mpirun_hostfile", hostfile()]),
    Case("flags CPU through mpirun", "", ["--cpu", *TWO, "--num_machines", "1", "--mpirun_hostfile", hostfile()]),
    Case("template fsdp2", "config-templates/fsdp2.yaml", TWO),
    Case("template deepspeed_zero2", "config-templates/deepspeed_zero2.yaml", TWO),
    Case("template deepspeed_zero3_offload", "config-templates/deepspeed_zero3_offload.yaml", TWO),
    Case("template fp16_grad_accum", "config-templates/fp16_grad_accum.yaml", TWO),
    Case("flags multi-GPU", "", [
        "--multi_gpu", *TWO, "--gpu_ids", "0,1", "--mixed_precision", "fp16", "--gradient_accumulation_steps", "4",
        "--dynamo_backend", "inductor", "--dynamo_mode", "max-autotune", "--dynamo_use_fullgraph",
        "--dynamo_use_dynamic", "--dynamo_use_regional_compilation", "--num_cpu_threads_per_process", "2",
        "--main_process_port", free_port(), "--max_restarts", "0", "--monitor_interval", "1",
        "--rdzv_backend", "static", "--rdzv_conf", "timeout=120", "--role", "trainer", "--tee", "3", "--quiet",
        "--log_dir", os.path.join(os.environ.get("TMPDIR", "/tmp"), "accel-peers-logs"),
        "--debug", "--downcast_bf16", "--enable_cpu_affinity", "--same_network", "--main_training_function", "main",
        "--env", "PARITY_USER_VARIABLE=1"]),
    Case("flags program as a module", "", [*TWO, "--multi_gpu"], form="module"),
    Case("flags program without python", "", [*TWO, "--multi_gpu"], form="no_python"),
    Case("flags FSDP 1", "", [
        "--use_fsdp", *TWO, "--mixed_precision", "bf16", "--fsdp_version", "1", "--fsdp_sharding_strategy",
        "SHARD_GRAD_OP", "--fsdp_offload_params", "true", "--fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP",
        "--fsdp_transformer_layer_cls_to_wrap", "Block", "--fsdp_backward_prefetch", "BACKWARD_POST",
        "--fsdp_forward_prefetch", "true", "--fsdp_state_dict_type", "FULL_STATE_DICT", "--fsdp_use_orig_params",
        "true", "--fsdp_sync_module_states", "true", "--fsdp_cpu_ram_efficient_loading", "true",
        "--fsdp_activation_checkpointing", "true"]),
    Case("flags FSDP 2 and parallelism", "", [
        "--use_fsdp", *TWO, "--fsdp_version", "2", "--fsdp_reshard_after_forward", "true",
        "--fsdp_auto_wrap_policy", "SIZE_BASED_WRAP", "--fsdp_min_num_params", "1000",
        "--fsdp_activation_checkpointing_offload", "true", "--fsdp_state_dict_type", "SHARDED_STATE_DICT",
        "--use_parallelism_config", "--parallelism_config_dp_replicate_size", "1",
        "--parallelism_config_dp_shard_size", "2", "--parallelism_config_tp_size", "1",
        "--parallelism_config_cp_size", "1", "--parallelism_config_cp_backend", "torch",
        "--parallelism_config_cp_comm_strategy", "allgather", "--parallelism_config_sp_size", "1",
        "--parallelism_config_sp_backend", "deepspeed", "--parallelism_config_sp_seq_length", "128",
        "--parallelism_config_sp_seq_length_is_variable", "true", "--parallelism_config_sp_attn_implementation",
        "sdpa"]),
    Case("flags DeepSpeed", "", [
        "--use_deepspeed", *TWO, "--zero_stage", "3", "--gradient_accumulation_steps", "2",
        "--gradient_clipping", "1.0", "--offload_optimizer_device", "nvme", "--offload_param_device", "nvme",
        "--offload_optimizer_nvme_path", "/tmp/nvme", "--offload_param_nvme_path", "/tmp/nvme",
        "--zero3_init_flag", "true", "--zero3_save_16bit_model", "true", "--deepspeed_moe_layer_cls_names", "Expert",
        "--deepspeed_hostfile", "/dev/null", "--deepspeed_exclusion_filter", "host9",
        "--deepspeed_inclusion_filter", "localhost", "--deepspeed_multinode_launcher", "standard"]),
    Case("flags DeepSpeed config file", "", [
        "--use_deepspeed", *TWO, "--deepspeed_config_file", "tests/peers/ds_config.json"]),
    Case("flags Megatron-LM", "", [
        "--use_megatron_lm", *TWO, "--megatron_lm_tp_degree", "2", "--megatron_lm_pp_degree", "1",
        "--megatron_lm_num_micro_batches", "2", "--megatron_lm_sequence_parallelism", "true",
        "--megatron_lm_recompute_activations", "true", "--megatron_lm_use_distributed_optimizer", "true",
        "--megatron_lm_gradient_clipping", "0.5", "--megatron_lm_context_parallel_size", "1",
        "--megatron_lm_expert_model_parallel_size", "1", "--megatron_lm_expert_tensor_parallel_size", "1",
        "--megatron_lm_attention_backend", "true", "--megatron_lm_attention_dropout", "0.1",
        "--megatron_lm_hidden_dropout", "0.1", "--megatron_lm_attention_softmax_in_fp32", "true",
        "--megatron_lm_calculate_per_token_loss", "true", "--megatron_lm_decoder_last_pipeline_num_layers", "2",
        "--megatron_lm_eod_mask_loss", "true", "--megatron_lm_no_load_optim", "true",
        "--megatron_lm_no_save_optim", "true", "--megatron_lm_optimizer_cpu_offload", "true",
        "--megatron_lm_overlap_cpu_optimizer_d2h_h2d", "true", "--megatron_lm_recompute_granularity", "full",
        "--megatron_lm_recompute_method", "uniform", "--megatron_lm_recompute_num_layers", "1",
        "--megatron_lm_use_custom_fsdp", "true", "--megatron_lm_use_precision_aware_optimizer", "true",
        "--megatron_lm_use_rotary_position_embeddings", "true"]),
]

# This machine as it is (no GPU, no fake NVML): Accelerate launches every paradigm anyway and
# its workers use the CPU. Every template, and the DeepSpeed and FSDP ones with use_cpu true too
# (Accelerate's DeepSpeed and torchrun launchers ignore it: no ACCELERATE_USE_CPU).
REAL = [Case(f"real {c.name}", c.config, c.args, c.machines, gpus=None) for c in CASES if c.name.startswith("template")]
CPU_TRUE = {"use_cpu": True}
REAL += [
    Case("real deepspeed_zero2 use_cpu", "config-templates/deepspeed_zero2.yaml", TWO, gpus=None, edits=CPU_TRUE),
    Case("real deepspeed_zero3_offload use_cpu", "config-templates/deepspeed_zero3_offload.yaml", TWO, gpus=None,
         edits=CPU_TRUE),
    Case("real fsdp2 use_cpu", "config-templates/fsdp2.yaml", TWO, gpus=None, edits=CPU_TRUE),
    Case("real fsdp1", "config-templates/fsdp2.yaml", TWO, gpus=None, edits={"fsdp_config.fsdp_version": 1}),
    Case("real fsdp1 use_cpu", "config-templates/fsdp2.yaml", TWO, gpus=None,
         edits={"fsdp_config.fsdp_version": 1, **CPU_TRUE}),
    # --cpu with a DeepSpeed file: Accelerate's simple launcher, one CPU process (no mpirun here).
    Case("real deepspeed_zero3_offload --cpu", "config-templates/deepspeed_zero3_offload.yaml",
         ["--cpu", "--num_processes", "1"], gpus=None),
]
CASES += REAL

# Flags no case passes, and why.
NOT_LAUNCHED = {
    "aws_access_key_id": "SageMaker: accel does not start SageMaker jobs (it says so and exits 2)",
    "aws_secret_access_key": "SageMaker: as aws_access_key_id",
    "tpu": "TPU pods: accel does not launch TPUs (it says so and exits 2)",
    "tpu_cluster": "TPU pods: as --tpu", "no_tpu_cluster": "TPU pods: as --tpu",
    "tpu_use_sudo": "TPU pods: as --tpu", "vm": "TPU pods: as --tpu",
    "fp8_backend": "FP8: accelerate launch refuses --mixed_precision fp8 without Transformer Engine, MS-AMP or "
                   "torchao, which need a GPU; the FP8 exports are compared with Accelerate's in "
                   "tests/unit/launch_args_test.cc",
    **{name: "FP8: as fp8_backend" for name in (
        "fp8_amax_compute_algo", "fp8_amax_history_len", "fp8_enable_fsdp_float8_all_gather", "fp8_format",
        "fp8_interval", "fp8_margin", "fp8_opt_level", "fp8_override_linear_precision", "fp8_pad_inner_dim",
        "fp8_use_autocast_during_eval")},
}


def uncovered_flags():
    """Accelerate 1.15 flags that neither a case nor NOT_LAUNCHED covers."""
    with open(FLAGS_FILE) as f:
        flags = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    used = {"config_file", "machine_rank", "module", "no_python"}  # passed by check_launch_parity itself
    for case in CASES:
        used |= {a[2:] for a in case.args if a.startswith("--")}
    return sorted(flags - used - set(NOT_LAUNCHED))
