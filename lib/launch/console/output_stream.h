// SPDX-License-Identifier: Apache-2.0
// Worker output: the bytes of one worker stream (its stdout or stderr, through a pipe or a
// pseudo-terminal) become prefixed lines "[rank N] …" (or "[host:rank N] …") on the console
// (console/console.h), so two ranks never share a line; a --log_dir file gets every byte the
// worker wrote, less terminal escapes; the console gets colours but no other escape (a progress
// bar's erase-line or cursor moves: the console draws each line and its prefix itself). A line
// that already starts with the worker's own rank the way torch writes it (`[rank0]: ` on
// tracebacks once a process group exists) loses that copy, so the console shows
// `[rank 0] Traceback`, not `[rank 0] [rank0]: `. The last lines of each stderr are kept for the
// failure summary.
//
// An open line (no newline yet) shows as it stands: on a terminal as the stream's live line,
// redrawn at every carriage return; elsewhere (a file, a pipe, CI) it is written once complete,
// except that text left open for kOpenLine is written with "…" and continued on the next
// prefixed line, and of a progress bar's frames (each carriage return ends one) at most one per
// progress interval is written, the newest, and then its last.
// Single-threaded; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/console/escapes.h"
#include "lib/launch/console/line_assembler.h"

namespace accel::launch::console {

struct StreamSetup {
  std::string prefix;          // "[rank 0] "
  Console* console = nullptr;  // null, or console_fd -1: the stream is not shown
  int console_fd = -1;         // 1 or 2: the launcher's stream it is shown on
  int key = 0;                 // its live line's place among the others
  int log_fd = -1;             // taken over and closed; -1 for no file
  size_t keep_lines = 0;       // kept for lastLines()
  std::string duplicate;       // the worker's own prefix as the program may write it ("" for none)
  std::chrono::milliseconds progress_interval = std::chrono::seconds(10);
  // torchrun's --duplicate_*_filters: the whole lines (as the log file has them) that hold any of
  // `copy_filters` are also written to copy_fd (taken over and closed), each after `copy_header`.
  int copy_fd = -1;
  std::vector<std::string> copy_filters{};
  std::string copy_header{};
  // Every byte the log file gets, also given here (another machine's logs sent to machine 0).
  std::function<void(std::string_view)> forward{};
};

class OutputStream {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kOpenLine = std::chrono::seconds(1);

  explicit OutputStream(StreamSetup setup);
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  ~OutputStream();

  void feed(const char* data, size_t size, Clock::time_point now = Clock::now());
  void finish();  // the open line, if any, as a complete line
  // What is due at `now` without new bytes (off a terminal: an open line, a thinned frame).
  void tick(Clock::time_point now);
  std::optional<Clock::time_point> deadline() const;
  const std::deque<std::string>& lastLines() const { return last_; }
  // What the worker wrote on this stream: bytes, progress-bar frames, and when it last wrote.
  struct Tally {
    uint64_t bytes = 0;
    uint64_t frames = 0;
    std::optional<Clock::time_point> last;
    std::string frame;  // the newest progress-bar frame, its first kMaxFrameKept bytes
  };
  static constexpr size_t kMaxFrameKept = 256;
  static constexpr size_t kMaxCopyLine = 1 << 20;  // a filtered copy's longest line
  const Tally& tally() const { return tally_; }
  const std::string& prefix() const { return setup_.prefix; }

 private:
  bool shown() const { return setup_.console && setup_.console_fd >= 0; }
  bool live() const { return shown() && setup_.console->onScreen(setup_.console_fd); }
  void complete(std::string_view line);
  void frame(std::string_view text, Clock::time_point now);
  void show(std::string_view text);
  void copyMatching(std::string_view clean, bool last);
  StreamSetup setup_;
  std::string copy_open_;  // the copy's open line
  LineAssembler lines_;
  EscapeFilter escapes_;
  std::deque<std::string> last_;
  std::optional<Clock::time_point> open_since_;  // off a terminal: unframed text is open
  std::optional<Clock::time_point> frame_at_;    // off a terminal: when a frame was last written
  bool frame_waiting_ = false;                   // a newer frame than the last written exists
  Tally tally_;
};

}  // namespace accel::launch::console
