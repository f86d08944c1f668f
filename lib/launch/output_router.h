// SPDX-License-Identifier: Apache-2.0
// Worker output: bytes from a worker's stdout/stderr pipe become whole lines, prefixed
// "[rank N] " (or "[host:rank N] "), written to the launcher's own stdout/stderr with one
// write() each, so two ranks never share a line; optionally also to per-rank log files. Keeps
// the last lines of each stderr for the failure summary. A line that already starts with the
// worker's own rank the way torch writes it (`[rank0]: ` on tracebacks once a process group
// exists) loses that copy, so the console shows `[rank 0] Traceback`, not `[rank 0] [rank0]: `.
// Single-threaded; not thread-safe.
#pragma once

#include <deque>
#include <string>

namespace accel {

class OutputStream {
 public:
  // `console_fd` 1 or 2, or -1 to keep this stream off the console; `log_fd` -1 for no file;
  // `duplicate` the worker's own prefix as the program may write it ("" for none).
  OutputStream(std::string prefix, int console_fd, int log_fd, size_t keep_lines, std::string duplicate = "");
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  ~OutputStream();

  void feed(const char* data, size_t size);  // emits every complete line
  void finish();                             // emits a last line without a newline, if any
  const std::deque<std::string>& lastLines() const { return last_; }

 private:
  void emit(std::string_view line);
  std::string prefix_;
  std::string duplicate_;
  int console_fd_;
  int log_fd_;
  size_t keep_;
  std::string pending_;
  std::deque<std::string> last_;
};

// Writes all of `text` to `fd`, retrying on EINTR; gives up silently on EPIPE and other errors
// (a closed console must not stop the job).
void writeFully(int fd, std::string_view text);

}  // namespace accel
