// SPDX-License-Identifier: Apache-2.0
// Question order follows Accelerate 1.15's `accelerate config` (get_cluster_input() in
// accelerate/commands/config/cluster.py, the "This machine" flow). accel offers the
// machine types it can launch (no distributed, multi-CPU, multi-GPU) and checks answers as they
// come, where Accelerate raises after the last question or writes a file that fails at launch.
#include "lib/config/wizard.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/config/schema.h"
#include "lib/config/validate.h"
#include "lib/config/wizard_paradigms.h"
#include "lib/config/wizard_steps.h"

namespace accel {

namespace wizard {

std::string promptFor(std::string_view key, std::string_view word) {
  std::string_view prompt = keySpec(key).prompt;
  if (word.empty()) return std::string(prompt);
  return fmt::format(fmt::runtime(prompt), word);
}

namespace {

const std::vector<std::string> kMachineTypes = {"No distributed training", "multi-CPU", "multi-GPU"};
const std::vector<std::string> kMachineTypeValues = {"NO", "MULTI_CPU", "MULTI_GPU"};

bool isMulti(const WizardState& s) { return s.type == "MULTI_CPU" || s.type == "MULTI_GPU"; }

void askMachines(WizardState& s) {
  Config& c = s.config;
  s.num_machines = s.ask.integer(promptFor("num_machines"), 1, "Please enter an integer.", 1);
  c.set("num_machines", s.num_machines);
  if (s.num_machines > 1) {
    std::vector<std::string> ranks;
    for (long long r = 0; r < s.num_machines; ++r) ranks.push_back(std::to_string(r));
    c.set("machine_rank", static_cast<long long>(s.ask.menu(promptFor("machine_rank"), ranks)));
    c.set("main_process_ip", s.ask.text(promptFor("main_process_ip"), {}, true));
    c.set("main_process_port", s.ask.integer(promptFor("main_process_port"), std::nullopt,
                                             "Please enter a port number from 0 to 65535.", 0, 65535));
    bool same_network = s.ask.yesNo(promptFor("same_network"), true);
    c.set("same_network", same_network);
    if (!same_network) c.set("rdzv_backend", s.ask.text(promptFor("rdzv_backend"), "static"));
  }
  c.set("debug", s.ask.yesNo(promptFor("debug"), false));
}

void askMpirun(WizardState& s) {
  if (!s.ask.yesNo("Do you want accelerate to launch mpirun? [yes/NO]: ", false)) return;
  std::string hostfile = s.ask.text(promptFor("mpirun_config.mpirun_hostfile"), "~/hostfile");
  s.config.set("mpirun_config.mpirun_hostfile", expandUser(hostfile));
}

std::string deviceWord(const WizardState& s) { return s.type == "MULTI_CPU" ? "processes" : "GPU(s)"; }

// The process count offered, one the checks below accept: one process per visible GPU on every
// machine (at least 2 on one machine, which multi-GPU needs), one per machine for CPUs.
long long defaultProcessCount(const WizardState& s, long long min) {
  const long long per_machine = s.type == "MULTI_CPU" ? 1 : std::max(1, s.visible_gpus);
  return std::max(min, per_machine * s.num_machines);
}

void askProcessCount(WizardState& s) {
  if (s.type == "NO") {
    s.config.set("num_processes", 1);
    return;
  }
  const long long min = s.type == "MULTI_GPU" && s.num_machines == 1 ? 2 : 1;
  const long long fallback = defaultProcessCount(s, min);
  const std::string prompt = fmt::format(fmt::runtime(keySpec("num_processes").prompt), deviceWord(s), fallback);
  while (true) {
    long long n = s.ask.integer(prompt, fallback, "Please enter an integer.", 1);
    if (n < min) {
      s.ask.say(
          "multi-GPU on one machine needs at least 2 processes; choose "
          "`No distributed training` for a single GPU.");
    } else if (n % s.num_machines != 0) {
      s.ask.say(
          fmt::format("This is the total across all {} machines: please enter a multiple "
                      "of {}.",
                      s.num_machines, s.num_machines));
    } else {
      s.config.set("num_processes", n);
      return;
    }
  }
}

void askGpuIds(WizardState& s) {
  const long long per_machine = s.config.resolved("num_processes").get<long long>() / s.num_machines;
  std::string ids = s.ask.checked(promptFor("gpu_ids", "GPU(s)"), "all", [per_machine](const std::string& answer) {
    std::string problem;
    auto parsed = parseGpuIds(answer, problem);
    if (!parsed) return problem + ".";
    if (!parsed->empty() && static_cast<long long>(parsed->size()) < per_machine) {
      return fmt::format("Please list at least {} GPU ids, one per process on this machine.", per_machine);
    }
    return std::string();
  });
  s.config.set("gpu_ids", ids);
}

void askPrecision(WizardState& s) {
  if (s.deepspeed_json) return;  // the DeepSpeed JSON file decides
  const auto& spec = keySpec("mixed_precision");
  std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
  std::string precision = choices[s.ask.menu(spec.prompt, choices, 0)];
  s.config.set("mixed_precision", precision);
  if (precision == "fp8") askFp8(s);
  if (s.dynamo && precision == "no" && !s.use_cpu) {
    s.ask.say(
        "Torch dynamo used without mixed precision requires TF32 to be efficient. "
        "Accelerate will enable it by default when launching your scripts.");
  }
}

// Keys the wizard always writes, with the values Accelerate's wizard gives them.
void setFixedKeys(WizardState& s) {
  Config& c = s.config;
  c.set("compute_environment", "LOCAL_MACHINE");
  c.set("distributed_type", s.type);
  c.set("downcast_bf16", "no");
  c.set("main_training_function", "main");
  c.set("use_cpu", s.use_cpu);
  c.set("tpu_env", nlohmann::json::array());
  c.set("tpu_use_cluster", false);
  c.set("tpu_use_sudo", false);
  for (const char* key : {"debug", "enable_cpu_affinity", "machine_rank", "num_machines", "rdzv_backend"}) {
    if (!c.find(key)) c.set(key, fileDefault(keySpec(key)));
  }
  if (!c.find("same_network")) c.set("same_network", true);
}

}  // namespace

}  // namespace wizard

nlohmann::json runConfigWizard(Prompter& prompter, int visible_gpus) {
  using namespace wizard;
  Asker ask(prompter);
  WizardState s{ask, {}};
  s.visible_gpus = visible_gpus;
  s.type = kMachineTypeValues[ask.menu(promptFor("distributed_type"), kMachineTypes, 0)];
  if (isMulti(s)) askMachines(s);
  if (s.type == "NO") {
    s.use_cpu = ask.yesNo(promptFor("use_cpu"), false);
  } else {
    s.use_cpu = s.type == "MULTI_CPU";
  }
  if (s.type == "MULTI_CPU") askMpirun(s);
  askDynamo(s);
  if (s.type == "NO" || s.type == "MULTI_GPU") askDeepSpeed(s);
  if (s.type == "MULTI_GPU") askFsdp(s);
  if (s.type == "MULTI_GPU") askMegatron(s);
  askProcessCount(s);
  const bool gpu_questions = (s.type == "NO" || s.type == "MULTI_GPU") && !s.use_cpu;
  if (gpu_questions) {
    askGpuIds(s);
    s.config.set("enable_cpu_affinity", ask.yesNo(promptFor("enable_cpu_affinity"), false));
  }
  askPrecision(s);
  setFixedKeys(s);
  return s.config.values;
}

}  // namespace accel
