// SPDX-License-Identifier: Apache-2.0
// The console's pieces without processes: a worker's bytes as lines and frames
// (LineAssembler), escapes (EscapeFilter, fitToWidth), the screen's live lines (Console, drawn
// into a pipe that stands for a terminal), and what an OutputStream writes off a terminal, on a
// clock the test moves.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/console/escapes.h"
#include "lib/launch/console/line_assembler.h"
#include "lib/launch/console/output_stream.h"
#include "tests/support/process.h"

using accel::launch::console::Console;
using accel::launch::console::LineAssembler;
using accel::launch::console::OutputStream;
using accel::test::occurrences;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

struct Fed {
  std::vector<std::string> lines, frames;
};

Fed feed(LineAssembler& a, std::string_view bytes) {
  Fed out;
  a.feed(
      bytes, [&](std::string_view l) { out.lines.emplace_back(l); },
      [&](std::string_view f) { out.frames.emplace_back(f); });
  return out;
}

// A pipe whose write end stands for the launcher's stdout (and stderr), read back whole.
struct Pipe {
  int fds[2];
  Pipe() {
    REQUIRE(::pipe2(fds, O_NONBLOCK) == 0);
    ::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  }
  ~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  std::string take() {
    std::string out;
    char buffer[65536];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<size_t>(n));
    return out;
  }
};

}  // namespace

TEST_CASE("console: complete lines, frames and the open line", "[unit][console]") {
  LineAssembler a;
  auto f = feed(a, "one\ntw");
  CHECK(f.lines == std::vector<std::string>{"one"});
  CHECK(a.visible() == "tw");
  CHECK_FALSE(a.framed());
  f = feed(a, "o\r\r 50%|#####\r 60%|######");
  CHECK(f.frames == std::vector<std::string>{"two", " 50%|#####"});
  CHECK(a.framed());
  CHECK(a.visible() == " 60%|######");
  f = feed(a, "\r\n");  // a bar's last frame, then its newline: the line is that frame
  CHECK(f.lines == std::vector<std::string>{" 60%|######"});
  CHECK(a.visible().empty());
  f = feed(a, "dos\r\nline\n");  // CRLF endings lose their CR
  CHECK(f.lines == std::vector<std::string>{"dos", "line"});
}

TEST_CASE("console: a bar redrawn forever holds one frame, a huge line goes in pieces", "[unit][console]") {
  LineAssembler a;
  for (int i = 0; i < 100000; ++i) feed(a, "\r" + std::string(100, 'x'));
  CHECK(a.visible().size() == 100);
  const std::string huge(LineAssembler::kMaxLine * 2 + 5, 'y');
  auto f = feed(a, "\n" + huge + "\n");
  REQUIRE(f.lines.size() == 4);
  CHECK(f.lines[1].size() == LineAssembler::kMaxLine);
  CHECK(f.lines[3] == "yyyyy");
  CHECK(a.takeOpen().empty());
}

TEST_CASE("console: escapes are dropped from logs, even when cut between reads", "[unit][console]") {
  accel::launch::console::EscapeFilter filter;
  const std::string first(filter.filter("\x1b[31mred\x1b["));
  CHECK(first + std::string(filter.filter("0m plain \x1b]0;title\x07!")) == "red plain !");
  CHECK(filter.filter("a\x1b(Bb\x1b=c") == "abc");
  CHECK(accel::launch::console::fitToWidth("héllo wörld", 5) == "héllo");
  CHECK(accel::launch::console::fitToWidth("\x1b[1mbold\x1b[0m text", 4) == "\x1b[1mbold\x1b[0m\x1b[0m");
  CHECK(accel::launch::console::fitToWidth("short", 80) == "short");
}

TEST_CASE("console: finished lines go above the live lines, which stay in key order", "[unit][console]") {
  Pipe screen;
  Console console({screen.fds[1], screen.fds[1], true, true});
  const auto t0 = Clock::now();
  console.live(2, "[rank 1] 10%");
  console.live(0, "[rank 0] 50%");
  console.flush(t0);
  CHECK(screen.take() == "[rank 0] 50%\n[rank 1] 10%");
  console.live(0, "[rank 0] 60%");
  console.flush(t0 + milliseconds(1));  // too soon to redraw
  CHECK(screen.take().empty());
  REQUIRE(console.deadline() == t0 + Console::kRedraw);
  console.line(1, "[rank 1] log");
  console.flush(t0 + milliseconds(2));  // a finished line is written at once, the live lines after it
  CHECK(screen.take() == "\r\x1b[1A\x1b[J[rank 1] log\n[rank 0] 60%\n[rank 1] 10%");
  console.live(0, "");
  console.live(2, "");
  console.flush(t0 + Console::kRedraw * 2);
  CHECK(screen.take() == "\r\x1b[1A\x1b[J");
  CHECK_FALSE(console.deadline());
}

TEST_CASE("console: off a terminal, runs of lines are written in order per sink", "[unit][console]") {
  Pipe out, err;
  Console console({out.fds[1], err.fds[1], false, false});
  console.line(1, "a");
  console.line(2, "b");
  console.line(1, "c");
  console.flush(Clock::now());
  CHECK(out.take() == "a\nc\n");
  CHECK(err.take() == "b\n");
  CHECK_FALSE(console.onScreen(1));
}

TEST_CASE("console: off a terminal, frames are thinned and open lines continued", "[unit][console]") {
  Pipe out, log;
  Console console({out.fds[1], out.fds[1], false, false});
  accel::launch::console::StreamSetup setup;
  setup.prefix = "[rank 0] ";
  setup.console = &console;
  setup.console_fd = 1;
  setup.log_fd = ::dup(log.fds[1]);
  setup.progress_interval = std::chrono::seconds(1);
  OutputStream stream(setup);
  const auto t0 = Clock::now();
  std::string all;
  for (int i = 0; i < 1000; ++i) {  // 1000 frames over 3 s
    const auto now = t0 + milliseconds(3 * i);
    const std::string frame = "\rframe " + std::to_string(i);
    stream.feed(frame.data(), frame.size(), now);
    all += frame;
    stream.tick(now);
  }
  stream.feed("\n", 1, t0 + milliseconds(3000));
  console.flush(t0 + milliseconds(3000));
  const std::string shown = out.take();
  CHECK(occurrences(shown, "[rank 0] frame") <= 5);
  CHECK(occurrences(shown, "[rank 0] frame") >= 3);
  CHECK(shown.ends_with("[rank 0] frame 999\n"));  // the last frame is always written
  CHECK(log.take() == all + "\n");                 // the log keeps every frame

  stream.feed("open", 4, t0 + milliseconds(4000));
  REQUIRE(stream.deadline() == t0 + milliseconds(4000) + OutputStream::kOpenLine);
  stream.tick(t0 + milliseconds(5000));
  stream.feed(" closed\n", 8, t0 + milliseconds(6000));
  console.flush(t0 + milliseconds(6000));
  CHECK(out.take() == "[rank 0] open…\n[rank 0]  closed\n");
}

TEST_CASE("console: a worker's erase-line and cursor moves never reach the console, its colours do",
          "[unit][console]") {
  using accel::launch::console::keepColours;
  CHECK(keepColours("\r\x1b[2K\x1b[32m 40%\x1b[0m") == "\r\x1b[32m 40%\x1b[0m");
  CHECK(keepColours("a\x1b[1Ab\x1b[Kc\x1b]0;title\x07"
                    "d\x1b(Be") == "abcde");
  CHECK(keepColours("cut \x1b[3") == "cut ");  // the rest comes with the next read

  // A rich progress bar on a terminal: every frame starts with "\r ESC[2K"; the live line and the
  // finished one keep the prefix, drawn by the console alone.
  Pipe screen;
  Console console({screen.fds[1], screen.fds[1], true, true});
  accel::launch::console::StreamSetup setup;
  setup.prefix = "[rank 1] ";
  setup.console = &console;
  setup.console_fd = 1;
  OutputStream stream(setup);
  const auto t0 = Clock::now();
  const std::string frames = "\r\x1b[2Ktrain \x1b[35m 50%\x1b[0m\r\x1b[2Ktrain \x1b[35m100%\x1b[0m";
  stream.feed(frames.data(), frames.size(), t0);
  console.flush(t0, true);
  const std::string live = screen.take();
  CHECK(live.starts_with("[rank 1] train \x1b[35m100%"));
  CHECK(live.find("\x1b[2K") == std::string::npos);
  stream.feed("\n", 1, t0);
  console.flush(t0 + Console::kRedraw, true);
  const std::string done = screen.take();
  CHECK(done.find("[rank 1] train \x1b[35m100%\x1b[0m\n") != std::string::npos);
  CHECK(done.find("\x1b[2K") == std::string::npos);
}
