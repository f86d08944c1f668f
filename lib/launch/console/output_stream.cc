// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/console/output_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "lib/common/write_fully.h"

namespace accel::launch::console {

OutputStream::OutputStream(StreamSetup setup) : setup_(std::move(setup)) {}

OutputStream::~OutputStream() {
  if (setup_.log_fd >= 0) ::close(setup_.log_fd);
  if (setup_.copy_fd >= 0) ::close(setup_.copy_fd);
}

void OutputStream::feed(const char* data, size_t size, Clock::time_point now) {
  const std::string_view bytes(data, size);
  tally_.bytes += size;
  tally_.last = now;
  if (setup_.log_fd >= 0 || setup_.copy_fd >= 0 || setup_.forward) {
    const std::string_view clean = escapes_.filter(bytes);
    if (setup_.log_fd >= 0) writeFully(setup_.log_fd, clean);
    if (setup_.forward) setup_.forward(clean);
    if (setup_.copy_fd >= 0) copyMatching(clean, false);
  }
  lines_.feed(
      bytes, [this](std::string_view line) { complete(line); }, [this, now](std::string_view f) { frame(f, now); });
  const std::string_view open = lines_.visible();
  if (live()) {
    setup_.console->live(setup_.key, open.empty() ? std::string() : setup_.prefix + keepColours(open));
  } else if (!open.empty() && !lines_.framed() && !open_since_) {
    open_since_ = now;
  }
}

// As torchrun's tail_logfile: each line read from the log, its newline kept, and the last one
// without a newline when the worker ends on one.
void OutputStream::copyMatching(std::string_view clean, bool last) {
  copy_open_.append(clean);
  size_t start = 0;
  for (size_t end; (end = copy_open_.find('\n', start)) != std::string::npos || (last && start < copy_open_.size());
       start = end + 1) {
    if (end == std::string::npos) end = copy_open_.size() - 1;
    const std::string_view line(copy_open_.data() + start, end - start + 1);
    const bool wanted = std::any_of(setup_.copy_filters.begin(), setup_.copy_filters.end(),
                                    [&](const std::string& f) { return line.find(f) != std::string_view::npos; });
    if (wanted) writeFully(setup_.copy_fd, setup_.copy_header + std::string(line));
  }
  copy_open_.erase(0, start);
  if (copy_open_.size() > kMaxCopyLine) copyMatching("\n", false);  // one line at most this long
}

void OutputStream::finish() {
  if (setup_.copy_fd >= 0) copyMatching("", true);
  if (!lines_.visible().empty()) complete(lines_.takeOpen());
  if (live()) setup_.console->live(setup_.key, "");
}

void OutputStream::complete(std::string_view line) {
  if (!setup_.duplicate.empty() && line.starts_with(setup_.duplicate)) line.remove_prefix(setup_.duplicate.size());
  if (setup_.keep_lines > 0) {
    last_.emplace_back(line);
    if (last_.size() > setup_.keep_lines) last_.pop_front();
  }
  open_since_.reset();
  frame_waiting_ = false;
  show(line);
}

void OutputStream::show(std::string_view text) {
  if (shown()) setup_.console->line(setup_.console_fd, setup_.prefix, keepColours(text));
}

void OutputStream::frame(std::string_view text, Clock::time_point now) {
  ++tally_.frames;
  if (text.find_first_not_of(" \t") != std::string_view::npos) tally_.frame.assign(text.substr(0, kMaxFrameKept));
  if (!shown() || live()) return;
  open_since_.reset();
  if (frame_at_ && now - *frame_at_ < setup_.progress_interval) {
    frame_waiting_ = true;
    return;
  }
  show(text);
  frame_at_ = now;
  frame_waiting_ = false;
}

void OutputStream::tick(Clock::time_point now) {
  if (open_since_ && now - *open_since_ >= kOpenLine) {
    show(lines_.takeOpen() + "…");
    open_since_.reset();
  }
  if (frame_waiting_ && now - *frame_at_ >= setup_.progress_interval) {
    show(lines_.lastFrame());
    frame_at_ = now;
    frame_waiting_ = false;
  }
}

std::optional<OutputStream::Clock::time_point> OutputStream::deadline() const {
  std::optional<Clock::time_point> at;
  if (open_since_) at = *open_since_ + kOpenLine;
  if (frame_waiting_) {
    const auto frame_due = *frame_at_ + setup_.progress_interval;
    at = at ? std::min(*at, frame_due) : frame_due;
  }
  return at;
}

}  // namespace accel::launch::console
