// SPDX-License-Identifier: Apache-2.0
// What one machine's supervisor tells the rest of the job, and what the job decides. The
// supervisor reports its workers' first failure, an interrupt and the end of each round; the
// link answers with events: stop the workers now, start the next round (a restart), or end the
// launch with an exit code and the reason. The decisions are the job's, made in one place:
//   - one machine: SoloLink decides alone (job_link.cc);
//   - several machines: machine 0's launcher hosts the job channel (JobHub, job_hub.h) and
//     decides for every machine; the others join it (JobMember, job_member.h). The wire is
//     typed messages, one JSON line each, over TCP on the job port (job_messages.h), with
//     heartbeats both ways so that a machine that vanishes is named within the heartbeat
//     timeout. Only launchers that know the job's token get in (hub_door.h).
// Single-threaded: the supervisor polls the link's descriptors beside its own.
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/launch/flight/arrivals.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/stacks/collect_stacks.h"

namespace accel::launch::job {

// A worker that failed, as every machine's summary names it.
struct WorkerFailure {
  int machine = 0;
  std::string host;  // the machine's host name
  int rank = 0;
  std::string who;  // "rank 3", or "mpirun"
  int pid = 0;
  int exit_code = 1;                   // the code, or 128 + signal
  std::string exit_text;               // "exited with code 3", "was killed by signal SIGKILL"
  double seconds = 0;                  // since its round started
  bool killed_from_outside = false;    // SIGKILL that no launcher sent (OOM killer, kill -9)
  std::vector<std::string> tail;       // its last lines, of the stream tail_of names:
  std::string tail_of = "stderr";      // "stderr", or "output" where both streams shared one terminal
  std::string raised;                  // from its @record error file: "RuntimeError: boom", or ""
  std::vector<std::string> traceback;  // ... and the Python traceback there
};

// Bytes of one rank's log file on their way to machine 0's --log_dir (a member's, job_link.h
// sendLogs): its round, local rank and stream (1 stdout, 2 stderr), and how many bytes of that
// stream the member dropped just before these (machine 0 fell behind).
struct LogChunk {
  int round = 0;
  int local_rank = 0;
  int stream = 1;
  std::string data;
  long long dropped = 0;
};

struct JobEvent {
  enum class Kind {
    Stop,          // stop this machine's workers now (another machine failed, or the job ends)
    Restart,       // start round `round` (MASTER_PORT `port`; 0: unchanged), `restarts` failures restarted so
                   // far; `failure` is why, or `message` where the machines changed (layout() has the new ones)
    End,           // the launch is over: exit with `exit_code`
    Ask,           // describe this machine's rank `rank` for question `id` (answer with tell())
    Answer,        // question `id` (this machine's ask()) is answered: `message`
    Hold,          // another machine stopped the job with Ctrl-Z (`stopped`), or continued it
    Collect,       // read this machine's ranks' stacks for gathering `id` (answer with stacksCollected())
    Stacks,        // every rank's stack (`stacks`): for question `id` (wantStacks()), or with id 0
                   // before the job stops for `stacks->why` (a hang, a lost machine, a collective timeout)
    Arrivals,      // machine 0: another machine's ranks' arrivals (`arrivals`), on its clock, which
                   // runs `offset_ns` ahead of this one's (clock_offset.h)
    Event,         // machine 0: another machine's event, its line in `message` (watch/event_log.h)
    StatusAsked,   // machine 0: machine `rank` asks for the job's view for its question `id` (tellStatus)
    Logs,          // machine 0: machine `rank` (host `message`) sent bytes of its ranks' logs (`logs`)
    StatusAnswer,  // the job's view (`message`, watch/status_json.h) for this machine's askStatus(`id`);
                   // "" when machine 0 cannot be asked
  };
  Kind kind = Kind::Stop;
  int round = 0;
  int port = 0;
  int restarts = 0;  // Restart
  long long id = 0;  // Ask, Answer
  int rank = 0;      // Ask
  int exit_code = 0;
  std::optional<WorkerFailure> failure;  // End, Restart: the job's first failure of the round
  int signal = 0;                        // End: the job was interrupted by this signal
  bool stopped = false;                  // Hold
  std::string message;                   // Stop: why; End: a lost machine or a refused join; Answer
  std::string hint;
  bool hub_lost = false;                                 // End: machine 0's launcher was lost (etcd elects another)
  std::shared_ptr<const stacks::GatheredStacks> stacks;  // Stacks
  double seconds = 0;                                    // Collect: how long the tools may take
  std::shared_ptr<const flight::Arrivals> arrivals;      // Arrivals
  long long offset_ns = 0;                               // Arrivals
  std::shared_ptr<const LogChunk> logs;                  // Logs

  static JobEvent stop(int round, std::string why) {
    JobEvent e;
    e.round = round;
    e.message = std::move(why);
    return e;
  }
  static JobEvent restart(int round, int port) {
    JobEvent e;
    e.kind = Kind::Restart;
    e.round = round;
    e.port = port;
    return e;
  }
  static JobEvent ask(long long id, int rank) {
    JobEvent e;
    e.kind = Kind::Ask;
    e.id = id;
    e.rank = rank;
    return e;
  }
  static JobEvent answer(long long id, std::string text) {
    JobEvent e;
    e.kind = Kind::Answer;
    e.id = id;
    e.message = std::move(text);
    return e;
  }
  static JobEvent hold(bool stopped) {
    JobEvent e;
    e.kind = Kind::Hold;
    e.stopped = stopped;
    return e;
  }
  static JobEvent collect(long long id, double seconds) {
    JobEvent e;
    e.kind = Kind::Collect;
    e.id = id;
    e.seconds = seconds;
    return e;
  }
  static JobEvent gathered(long long id, stacks::GatheredStacks stacks) {
    JobEvent e;
    e.kind = Kind::Stacks;
    e.id = id;
    e.stacks = std::make_shared<const stacks::GatheredStacks>(std::move(stacks));
    return e;
  }
  static JobEvent arrived(flight::Arrivals arrivals, long long offset_ns) {
    JobEvent e;
    e.kind = Kind::Arrivals;
    e.arrivals = std::make_shared<const flight::Arrivals>(std::move(arrivals));
    e.offset_ns = offset_ns;
    return e;
  }
  static JobEvent event(std::string line) {
    JobEvent e;
    e.kind = Kind::Event;
    e.message = std::move(line);
    return e;
  }
  static JobEvent end(int exit_code, std::string message = {}, std::string hint = {}) {
    JobEvent e;
    e.kind = Kind::End;
    e.exit_code = exit_code;
    e.message = std::move(message);
    e.hint = std::move(hint);
    return e;
  }
};

class JobLink {
 public:
  virtual ~JobLink() = default;

  // Before round 0: every machine's launcher has joined (or the hub refused this one). Returns
  // 0, or 128 + signal when interrupted while waiting. Throws Error naming what went wrong.
  virtual int rendezvous(int signal_fd) = 0;
  // The MASTER_PORT of round 0 as the job agreed it (machine 0's), or 0 to keep the plan's.
  virtual int firstPort() const { return 0; }
  // Several machines, after rendezvous: every machine's share as machine 0 settled it, and this
  // machine's rank (given out at the join where the plan had none), for the next plan (plan/build.h).
  // Where machines come and go (plan.dynamic), every round has its own: layout() is the latest
  // round's, with its number and the restarts before it.
  struct Layout {
    int machine = 0;
    std::vector<plan::MachineShare> shares;
    int round = 0;
    int restarts = 0;
    std::string master_addr;  // where etcd elected machine 0: its address; "" for the plan's
  };
  virtual std::optional<Layout> layout() const { return std::nullopt; }

  // Descriptors to poll beside the supervisor's, and the longest the supervisor may sleep.
  virtual void addPollFds(std::vector<pollfd>& fds) const = 0;
  virtual int timeoutMs() const = 0;
  // After poll: reads what arrived, sends heartbeats, notices lost machines. `fds` is the whole
  // poll array (the link finds its own entries).
  virtual std::vector<JobEvent> service(const std::vector<pollfd>& fds) = 0;

  // From the supervisor: this machine's first failed worker, as soon as it is reaped, and again
  // with `replaces` at the end of the round (its whole stderr tail read, or another worker named
  // first: one SIGKILLed just before the peer it broke).
  virtual void workerFailed(const WorkerFailure& failure, bool replaces) = 0;
  virtual void interrupted(int signal) = 0;
  // Every worker of this machine has exited (all of them 0 when `succeeded`); `saved_step` is the
  // highest step of a checkpoint its workers saved, in any round (-1: none seen), by which the
  // job knows whether a restart made progress (restart_policy.h).
  virtual void roundEnded(int round, bool succeeded, long long saved_step) = 0;
  // Questions about another machine's ranks (rank_questions.h): ask() is answered by an Answer
  // event with the same id; an Ask event is answered with tell(). Ids are the asker's own.
  virtual void ask(long long id, int rank) = 0;
  virtual void tell(long long id, const std::string& text) = 0;
  // Job control: this machine's launcher is about to stop with its workers (Ctrl-Z), or has
  // continued them. The other machines stop or continue theirs (a Hold event), and while the job
  // is held no machine counts another's silence against the heartbeat timeout (nor --hang_timeout).
  virtual void hold(bool stopped) = 0;

  // Every rank's stack (lib/launch/stacks/). The launcher that decides for the job gathers them
  // from every machine (Collect events, answered with stacksCollected()) before it stops the job
  // for a hang (progressed() and --hang_timeout), a lost machine or a failure that looks like a
  // collective's timeout (timedOutInCollective()), and for `accel stacks` (wantStacks()); a Stacks
  // event brings them. A Stop comes after them, within the stacks timeout and its slack.
  virtual void progressed() = 0;
  virtual void stacksCollected(long long id, const std::vector<stacks::RankStack>& stacks) = 0;
  virtual void wantStacks(long long id, double seconds) = 0;  // the tools' limit

  // This machine's ranks' arrivals at collectives (flight/straggler_watch.h), on its clock: a
  // member sends them to machine 0 (which judges the job) and returns true; machine 0 and a lone
  // machine return false, and judge them where they are.
  virtual bool sendArrivals(const flight::Arrivals&) { return false; }
  // One of this machine's events (a line of watch/event.h): a member sends it to machine 0, whose
  // event log holds the whole job's, and returns true; machine 0 and a lone machine return false.
  virtual bool sendEvent(const std::string&) { return false; }

  // What machine 0 knows of the others for `accel top` (watch/status_json.h): a member sends its
  // status about once a second (sendStatus); machine 0 keeps each one's last (machineReports).
  // A member's `accel top` asks machine 0 for the job's view (askStatus; a StatusAnswer event
  // brings it), which machine 0 answers with tellStatus when a StatusAsked event asks.
  struct MachineReport {
    int machine = 0;
    std::string host;
    std::string status;      // its last status's JSON text; "" before the first
    double status_age = -1;  // seconds since it came
    double heard_age = 0;    // seconds since its launcher last sent anything
    bool lost = false;
  };
  virtual bool sendStatus(const std::string&) { return false; }
  // A member sends its ranks' log bytes to machine 0 (--log_dir): Later when the channel is too
  // far behind to take them now, unless `force` (the round's end, before roundEnded, so that
  // machine 0 has them all when the job ends). Machine 0 and a lone machine never send.
  enum class LogSend { Sent, Later, Nobody };  // Nobody: no machine 0 to take them (it is gone)
  virtual LogSend sendLogs(const LogChunk&, bool /*force*/) { return LogSend::Nobody; }
  virtual std::vector<MachineReport> machineReports() const { return {}; }
  virtual void askStatus(long long /*id*/) {}  // a member's: machine 0 and a lone machine answer themselves
  virtual void tellStatus(int /*machine*/, long long /*id*/, const std::string& /*json*/) {}
};

// Chooses the link for `plan`: SoloLink on one machine, JobHub on machine 0 of several,
// JobMember on the others, EtcdLink (etcd_link.h) where etcd elects machine 0. Throws Error
// when the hub cannot listen on the job port.
std::unique_ptr<JobLink> makeJobLink(const plan::LaunchPlan& plan);

// Where a member reaches machine 0's launcher: the plan's master_addr and job_port, or the
// ones etcd elected.
struct HubAddress {
  std::string host;
  int port = 0;
};

// Machine 0's launcher was lost before the round started (JobMember's rendezvous).
class HubLost : public Error {
 public:
  using Error::Error;
};

// Who decides which failure was the job's first: the earliest report, except that a worker
// SIGKILLed from outside and reported within `kKilledFirstWindow` of a failure that ended with an
// exit code is named first (its sockets close before its death is seen, so the peer it broke
// can be reported first).
inline constexpr double kKilledFirstWindow = 0.5;

}  // namespace accel::launch::job
