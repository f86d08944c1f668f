// SPDX-License-Identifier: Apache-2.0
// The job channel's messages (job_link.h), typed, and their one codec. On the wire each message
// is one JSON object on one line: "t" names its kind, the other fields are the struct's.
//
//   member -> hub: join (the first line of every connection), failed, interrupted, ended,
//                  pg (this machine's ranks made progress: --hang_timeout)
//   hub -> member: start, refuse, stop, restart, end
//   both ways:     hb (a heartbeat; any line counts as one), ask and tell (a question about a
//                  rank and its answer, routed by machine 0: rank_questions.h), hold (the job
//                  stopped with Ctrl-Z on one machine, or continued: machine 0 passes it on),
//                  sw, sp and sd (every rank's stack: machine 0 wants a machine's, or a machine
//                  wants the job's for `accel stacks`; a rank's stack in parts of at most
//                  kMaxText; a machine's stacks are all sent: lib/launch/stacks/)
//   member -> hub: ar (this machine's ranks' arrivals at collectives: flight/straggler_watch.h),
//                  ce (the echo of a clock probe, with this machine's clock: clock_offset.h)
//   hub -> member: ck (a clock probe)
//   member -> hub: ev (one of this machine's events, for machine 0's event log: watch/event_log.h),
//                  st (this machine's status, once a second: watch/status_json.h)
//                  lg (bytes of a rank's log files for machine 0's --log_dir, in base64)
//   both ways:     sq and sa (`accel top` on a machine asks machine 0 for the job's view, and its answer)
//
// decode() trusts nothing: the line's length and nesting are bounded before it is parsed, then
// every field is checked for its type and range, missing and unknown fields are refused, and
// the error names the field. encode() clamps what a launcher reports (a worker's stderr tail, a
// traceback) to the same limits, so a message of ours always decodes.
//
// Versions: kProtocolVersion changes whenever a message changes. join and refuse keep their
// "t", "v" and "token" fields in every version (readHello), so two launchers of different
// versions can still tell each other so, naming both; nothing else is read before the versions
// agree.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lib/launch/flight/arrivals.h"
#include "lib/launch/job/job_link.h"

namespace accel::launch::job {

inline constexpr int kProtocolVersion = 11;  // 1: the unversioned channel of accel before it

// Bounds on what one line may hold: a reader refuses more, a writer clamps to them.
inline constexpr size_t kMaxLine = 256 * 1024;
inline constexpr size_t kMaxText = 4096;      // one string field
inline constexpr size_t kMaxLines = 64;       // a list of lines (stderr tail, traceback)
inline constexpr size_t kMaxLineText = 1024;  // one line of such a list
inline constexpr int kMaxDepth = 4;           // objects and arrays nested in a message

inline constexpr size_t kMaxRuns = 4096;                   // a layout's runs of alike machines (Start)
inline constexpr long long kMaxRank = (1LL << 20) * 4096;  // machines x one launcher's workers
inline constexpr size_t kMaxRoleText = 64;
inline constexpr size_t kMaxArrivals = 2048;  // arrivals in one ar message (a sender splits more): within kMaxLine
inline constexpr size_t kMaxEventLine = 16 * 1024;  // an event's line (ev)
// A status or a job's view (st, sa): as a JSON string inside its line each '"' and '\' it holds
// doubles, so twice it stays within kMaxLine.
inline constexpr size_t kMaxStatusText = (kMaxLine - 4096) / 2;
inline constexpr size_t kMaxLogChunk =
    64 * 1024;  // raw bytes of one lg: within kMaxLine as base64  // a status or a job's view (st, sa): within kMaxLine
inline constexpr double kMaxStackSeconds =
    600;  // the stack tools' limit (sw)  // a role's name (--role refuses longer ones)

struct Join {
  int version = kProtocolVersion;
  int machine = 0;  // -1: give this launcher the next free machine rank
  std::string host;
  int pid = 0;
  int machines = 0;      // MAX of --nnodes MIN:MAX
  int min_machines = 0;  // MIN
  long long world = 0;   // 0: no total given, the workers of every machine make it
  std::string token;
  int procs = 0;     // this machine's workers
  std::string role;  // their ROLE_NAME
};
// The first round of the launcher it goes to (every machine joined; or, where machines come and
// go, the round it was let into): the layout, its machine rank, the round and the restarts so far.
struct Start {
  int version = kProtocolVersion;
  int port = 0;
  int machine = 0;
  std::vector<plan::MachineShare> layout;
  int round = 0;
  int restarts = 0;
};
struct Refuse {
  int version = kProtocolVersion;
  std::string message, hint;
};
struct Stop {
  int round = 0;
  std::string why;
};
// The next round: after a failure (`failure`, restarts counted), or a change of machines (`why`).
// The layout and machine rank are the round's, which may differ from the last one's.
struct Restart {
  int round = 0;
  int port = 0;
  std::optional<WorkerFailure> failure;
  int restarts = 0;
  std::string why;
  int machine = 0;
  std::vector<plan::MachineShare> layout;
};
struct End {
  int code = 0;
  int signal = 0;
  std::string message, hint;
  std::optional<WorkerFailure> failure;
};
struct Failed {
  WorkerFailure failure;
  bool replaces = false;
};
struct Interrupted {
  int signal = 0;
};
struct Ended {
  int round = 0;
  bool ok = false;
  long long saved = -1;  // the highest step of a checkpoint the machine's workers saved; -1: none
};
struct Heartbeat {};
// What became of `rank`? Asked on behalf of a worker; `id` is the asker's, echoed in the tell.
struct Ask {
  long long id = 0;
  int rank = 0;
};
struct Tell {
  long long id = 0;
  std::string text;
};
// The job is stopped (`stopped`), or continued, from machine `machine`'s terminal.
struct Hold {
  bool stopped = false;
  int machine = 0;
};
// Some rank of the sender's machine printed something or finished a collective (sent at most
// every kProgressEvery).
struct Progress {};
// hub -> member: read your ranks' stacks for gathering `id`; member -> hub: gather the job's
// stacks for this machine's question `id` (an `accel stacks` run there).
struct StacksWanted {
  long long id = 0;
  double seconds = 0;  // how long the tools may take
};
// One part of rank `rank`'s stack, read on machine `machine` (`text` continues the parts before
// it: they come in order). Gathering `id` as its receiver named it.
struct StackPart {
  long long id = 0;
  int machine = 0;
  std::string host;
  int rank = 0;
  int pid = 0;
  std::string tool, summary, problem, text;
  std::string flight;  // continues the parts before it, as `text` does (flight_text.h)
};
// Machine `machine` sent every stack it has for `id` (-1 from machine 0: every machine's).
// `note` says what is missing ("machine 2 sent no stacks within 6 s").
struct StacksDone {
  long long id = 0;
  int machine = 0;
  std::string note;
};

// This machine's ranks' arrivals since its last (flight/arrivals.h), on its clock.
struct ArrivalsSent {
  flight::Arrivals arrivals;
};
// hub -> member: answer with your clock at once; member -> hub: the answer.
struct ClockProbe {
  long long id = 0;
};
struct ClockEcho {
  long long id = 0;
  long long ns = 0;  // the member's clock (flight_ring.h nowNs) when it read the probe
};

// One of the sender's events, its line as watch/event.h writes it (one JSON object).
struct EventSent {
  std::string line;
};

// This machine's status (watch/status_json.h statusJson), as JSON text.
struct StatusSent {
  std::string json;
};
// The job's view for question `id` (the asker's); `json` is watch/status_json.h jobViewJson's text.
struct StatusAsked {
  long long id = 0;
};
struct StatusAnswer {
  long long id = 0;
  std::string json;
};

struct LogsSent {
  LogChunk chunk;
};

using Message = std::variant<Join, Start, Refuse, Stop, Restart, End, Failed, Interrupted, Ended, Heartbeat, Ask, Tell,
                             Hold, Progress, StacksWanted, StackPart, StacksDone, ArrivalsSent, ClockProbe, ClockEcho,
                             EventSent, StatusSent, StatusAsked, StatusAnswer, LogsSent>;

// One line, without its newline.
std::string encode(const Message& message);

// The message on `line`, or nullopt with `error` saying what is wrong ("field 'round': -1 is
// not in 0..1000000").
std::optional<Message> decode(std::string_view line, std::string& error);

// What every version's first line says: a join with its protocol version (1 when absent) and
// the job's token. nullopt with `error` when the line is no join at all.
struct Hello {
  int version = 1;  // 0: unreadable
  std::string token;
  std::string host;  // as the peer gave it, "?" when unreadable (for messages only)
};
std::optional<Hello> readHello(std::string_view line, std::string& error);

// The protocol version a handshake line of any version says it speaks: join, start and refuse
// carry their "v" (1 when absent: the unversioned channel). 0 for any other line.
int versionOf(std::string_view line);

// Equal tokens, in time that does not depend on where they differ.
bool sameToken(std::string_view a, std::string_view b);

// The message's "t", for notes ("join", "hb", …).
const char* kindName(const Message& message);

}  // namespace accel::launch::job
