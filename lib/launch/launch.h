// SPDX-License-Identifier: Apache-2.0
// `accel launch`'s front door, the top of lib/launch: the command line and its sources become
// typed settings (settings/), the facts of this machine are gathered once (facts/), a plan is
// built from both (plan/), and the plan runs: this machine's workers under a supervisor
// (supervise/, with the job channel of job/ where the job has several machines), every host's
// launcher under a hostfile head (fleet/), or one launcher per node through srun. apps/ parses
// the words, prints the plan for --dry_run, and calls run().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/config/loader.h"
#include "lib/launch/facts/facts.h"
#include "lib/launch/fleet/head_orders.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch {

class Launch {
 public:
  // Everything decided before anything starts. `orders`: a hostfile head started this launcher
  // (`accel launch --from_head`), with this machine's place. Throws UsageError or ConfigError
  // (exit 2) naming what is wrong and how to fix it, Error for what the machine refuses.
  explicit Launch(const settings::LaunchOptions& options, const fleet::HeadOrders* orders = nullptr);
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  const settings::LaunchSettings& settings() const { return settings_; }
  const facts::Facts& facts() const { return facts_; }
  const plan::LaunchPlan& plan() const { return plan_; }
  // The config file's notes and warnings, for the caller to print ("" when a head sent the file).
  const std::vector<std::string>& configNotes() const { return config_notes_; }
  const std::vector<Diagnostic>& configWarnings() const { return config_warnings_; }

  // Runs the plan; returns the launch's exit code (a failed worker's own, 128 + a signal, …).
  int run();

 private:
  struct Owned;
  std::unique_ptr<Owned> owned_;  // what the facts point to, and the files the plan names
  std::vector<std::string> config_notes_;
  std::vector<Diagnostic> config_warnings_;
  settings::LaunchSettings settings_;
  facts::Facts facts_;
  plan::LaunchPlan plan_;
  const fleet::HeadOrders* orders_;
};

}  // namespace accel::launch
