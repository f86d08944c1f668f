// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/output_router.h"

#include <unistd.h>

#include <cerrno>

namespace accel {

namespace {
// A "line" longer than this is emitted in pieces, so one runaway writer cannot grow memory.
constexpr size_t kMaxLine = 64 * 1024;
}  // namespace

void writeFully(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

OutputStream::OutputStream(std::string prefix, int console_fd, int log_fd, size_t keep_lines, std::string duplicate)
    : prefix_(std::move(prefix)),
      duplicate_(std::move(duplicate)),
      console_fd_(console_fd),
      log_fd_(log_fd),
      keep_(keep_lines) {}

OutputStream::~OutputStream() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

void OutputStream::feed(const char* data, size_t size) {
  pending_.append(data, size);
  size_t start = 0;
  while (true) {
    size_t newline = pending_.find('\n', start);
    if (newline == std::string::npos) break;
    emit(std::string_view(pending_).substr(start, newline - start));
    start = newline + 1;
  }
  pending_.erase(0, start);
  while (pending_.size() >= kMaxLine) {
    emit(std::string_view(pending_).substr(0, kMaxLine));
    pending_.erase(0, kMaxLine);
  }
}

void OutputStream::finish() {
  if (!pending_.empty()) emit(pending_);
  pending_.clear();
}

void OutputStream::emit(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!duplicate_.empty() && line.starts_with(duplicate_)) line.remove_prefix(duplicate_.size());
  if (console_fd_ >= 0) {
    std::string out;
    out.reserve(prefix_.size() + line.size() + 1);
    out.append(prefix_).append(line).append("\n");
    writeFully(console_fd_, out);  // one write per line: lines of different ranks never mix
  }
  if (log_fd_ >= 0) {
    std::string out(line);
    out += '\n';
    writeFully(log_fd_, out);
  }
  if (keep_ > 0) {
    last_.emplace_back(line);
    if (last_.size() > keep_) last_.pop_front();
  }
}

}  // namespace accel
