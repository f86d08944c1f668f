// SPDX-License-Identifier: Apache-2.0
// Machine 0's side of the job channel (job_link.h): waits until every machine's launcher joined,
// then decides for the whole job. The first failure, interrupt or lost machine anywhere makes it
// tell every machine to stop its workers; once every machine's round ended it sends the verdict:
// the next round (fresh MASTER_PORT) or the end, with the exit code and the failure to name.
// Connections come in through the door (hub_door.h), which lets only this job's launchers join;
// after that every line is decoded (job_messages.h) before it is used, and a launcher whose line
// cannot be read counts as lost, naming what was wrong.
// Where machine 0 gives out the machine ranks (plan.dynamic, job_hub_rounds.cc), machines come
// and go: the first round starts with MAX machines, or MIN once the last call passed; a machine
// that joins later waits, and ends the running round if it has fewer than MAX; a machine lost
// ends the round and the next is formed from who is left, with the waiting ones (spares) first
// in line, as soon as every survivor ended its round. Below MIN the job waits join_timeout for
// machines. Such changes do not count as restarts; failures do.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/launch/job/clock_offset.h"
#include "lib/launch/job/hang_watch.h"
#include "lib/launch/job/hub_door.h"
#include "lib/launch/job/job_link.h"
#include "lib/launch/job/job_round.h"
#include "lib/launch/job/join_rules.h"
#include "lib/launch/job/own_absence.h"
#include "lib/launch/job/question_routes.h"
#include "lib/launch/job/restart_policy.h"
#include "lib/launch/job/stack_gatherings.h"

namespace accel::launch::job {

class JobHub final : public JobLink {
 public:
  // Listens on plan.job_port (0: a free port, see port()); throws Error when it cannot.
  // `note` takes the door's one-line notes (default: the launcher's stderr).
  // Where etcd elected this launcher machine 0 (etcd_link.h) after another was lost: the job
  // it continues. Its first round is `round`, after `restarts`, and forms as soon as `expected`
  // machines (this one included) are here, or as the first round would.
  struct Continuation {
    int round = 0;
    int restarts = 0;
    int expected = 0;
  };
  explicit JobHub(const plan::LaunchPlan& plan, HubDoor::Limits limits = {}, HubDoor::Note note = {},
                  std::optional<Continuation> continuation = std::nullopt);
  ~JobHub() override;

  int port() const;
  // The MASTER_PORT of the round formed last (every round's is fresh where etcd elects machine 0).
  int roundPort() const { return round_port_; }
  int rendezvous(int signal_fd) override;
  std::optional<Layout> layout() const override { return layout_; }
  void addPollFds(std::vector<pollfd>& fds) const override;
  int timeoutMs() const override;
  std::vector<JobEvent> service(const std::vector<pollfd>& fds) override;
  void workerFailed(const WorkerFailure& failure, bool replaces) override;
  void interrupted(int signal) override;
  void roundEnded(int round, bool succeeded, long long saved_step) override;
  void ask(long long id, int rank) override;
  void tell(long long id, const std::string& text) override;
  void hold(bool stopped) override;
  void progressed() override { hang_.progress(); }
  void stacksCollected(long long id, const std::vector<stacks::RankStack>& stacks) override;
  std::vector<MachineReport> machineReports() const override;
  void tellStatus(int machine, long long id, const std::string& json) override;
  void wantStacks(long long id, double seconds) override { gather(0, id, "", seconds); }

 private:
  struct Member {
    std::unique_ptr<LineConnection> conn;
    Joined who;
    bool ended = false, ok = false, lost = false;
    bool started = false;  // it has had its Start: later rounds come to it as Restart
    ClockOffset clock{};   // its clock's offset from this one (job_hub_clocks.cc)
    std::string status{};  // its last status (job_link.h MachineReport)
    std::chrono::steady_clock::time_point status_at{};
    std::chrono::steady_clock::time_point probed{};
  };

  void broadcast(const job::Message& message);
  void start();
  [[noreturn]] void failJoin(const std::string& message, const std::string& hint = "", int code = 1);
  FindJoined joined() const;
  void letIn(const std::vector<pollfd>& fds);
  void admit(HubDoor::Entrant entrant);
  void admitDynamic(HubDoor::Entrant entrant, const std::string& address);
  std::string tooFewMachines() const;
  void refuseVersion(HubDoor::OtherVersion other);
  void readMember(int machine, Member& m, short revents);
  void onMessage(int machine, Member& m, const job::Message& message);
  void heartbeat(int machine, Member& m);
  void onLost(int machine, Member& m, const std::string& why);
  void onFailure(const WorkerFailure& failure, bool replaces);
  void onHold(const job::Hold& hold);  // tells every machine but the one that held
  void onInterrupt(int signal, int machine);
  void stopAll(const std::string& why);
  void decideIfEnded();
  double roundSeconds() const;
  // Questions about ranks (rank_questions.h), routed here: asker 0 is this launcher.
  void route(int asker, long long their_id, int rank);
  void deliver(int asker, long long their_id, const std::string& text);
  void answered(long long id, const std::string& text);
  // Every rank's stack (job_hub_stacks.cc): a gathering from every machine still heard, for a
  // question (asker 0 is this launcher) or before the job stops for `why`.
  void gather(int asker, long long asker_id, const std::string& why, double seconds);
  void stopAfterStacks(const std::string& why);
  void onStacksMessage(int machine, const job::Message& message);
  void finishGatherings();
  void watchForHang();
  // The straggler watch's part (job_hub_clocks.cc): members' clocks probed, their arrivals passed on.
  void probeClock(Member& m);
  void onArrivals(Member& m, const job::Message& message);
  // Dynamic membership (job_hub_rounds.cc).
  bool readyForRound();
  void formRound(const std::string& why, const std::optional<WorkerFailure>& failure);
  void admitLater(HubDoor::Entrant e, const std::string& address);
  void serviceWaiting(const std::vector<pollfd>& fds);
  void regroup();
  std::string askToLeave(const std::optional<WorkerFailure>& failure);
  void checkShortOfMachines();
  int survivors() const;  // this round's members not lost
  std::string roundLine(const std::string& why) const;

  const plan::LaunchPlan& plan_;
  int listen_fd_ = -1;
  std::unique_ptr<HubDoor> door_;
  bool started_ = false;
  std::optional<Layout> layout_;   // settled once every machine joined
  std::map<int, Member> members_;  // machine rank 1.. -> its launcher, in this round
  std::vector<Member> waiting_;    // dynamic: joined, not in this round (newcomers, spares), oldest first
  int round_ = 0;
  int round_port_ = 0;
  int expected_ = 0;     // a continued job: the machines known alive when it was elected
  int restarts_ = 0;     // failures restarted (TORCHELASTIC_RESTART_COUNT)
  std::string regroup_;  // dynamic: why this round ends for a change of machines, "" when it does not
  std::optional<std::chrono::steady_clock::time_point> enough_since_;  // MIN are here: the last call runs
  std::optional<std::chrono::steady_clock::time_point> short_since_;   // between rounds, fewer than MIN
  HubDoor::Note say_;
  // The next round, formed by service() once it no longer walks members_ (forming replaces them).
  struct DueRound {
    std::string why;
    std::optional<WorkerFailure> failure;
  };
  std::optional<DueRound> due_;
  bool stopping_ = false, self_ended_ = false, self_ok_ = false;
  bool finished_ = false;  // the end was sent
  bool held_ = false;      // stopped with Ctrl-Z on some machine: silence is no loss
  FailureLedger ledger_;
  int signal_ = 0;
  std::string lost_, lost_hint_;
  OwnAbsence absence_;
  std::vector<JobEvent> queued_;
  std::chrono::steady_clock::time_point round_started_ = std::chrono::steady_clock::now();
  QuestionRoutes routes_;  // questions on their way
  StackGatherings gatherings_;
  HangWatch hang_;
  RestartPolicy policy_{rulesOf(plan_)};
  std::string hung_;      // why the job stopped for --hang_timeout, "" when it did not
  long long probes_ = 0;  // clock probes sent
  long long saved_ = -1;  // the highest checkpoint step any machine's workers saved (restart_policy.h)
};

}  // namespace accel::launch::job
