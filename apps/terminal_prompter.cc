// SPDX-License-Identifier: Apache-2.0
// Interactive prompts drawn the way Accelerate's BulletMenu draws them: a rule, the question,
// "Please select a choice using the arrow or number keys, and selecting with enter", one row per
// choice with " ➔ " and green on the highlighted one. Arrows and digits move, Enter selects.
// Fields use a small raw-mode line editor, so Ctrl-C is a key (abort, exit 130) everywhere.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "apps/prompters.h"
#include "lib/common/error.h"

namespace accel {

namespace {

constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kReset = "\x1b[0m";
constexpr const char* kHideCursor = "\x1b[?25l";
constexpr const char* kShowCursor = "\x1b[?25h";

termios g_saved;
volatile sig_atomic_t g_raw = 0;

void out(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(1, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Async-signal-safe: put the terminal back before dying of SIGTERM/SIGHUP/SIGQUIT.
extern "C" void restoreAndReraise(int sig) {
  if (g_raw) {
    ::tcsetattr(0, TCSANOW, &g_saved);
    ::write(1, kShowCursor, 6);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Raw input for the lifetime of the object; output post-processing stays on ("\n" → "\r\n").
class RawMode {
 public:
  RawMode() {
    if (::tcgetattr(0, &g_saved) != 0) throw Error("cannot read terminal settings of stdin");
    termios raw = g_saved;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
    raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    for (int sig : {SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, restoreAndReraise);
    g_raw = 1;
    ::tcsetattr(0, TCSANOW, &raw);
  }
  ~RawMode() {
    ::tcsetattr(0, TCSANOW, &g_saved);
    g_raw = 0;
  }
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;
};

enum class Key { Up, Down, Enter, Interrupt, Backspace, KillLine, Other };

struct KeyPress {
  Key key = Key::Other;
  char ch = 0;  // the byte, for Key::Other
};

char readByte() {
  char c = 0;
  while (true) {
    ssize_t n = ::read(0, &c, 1);
    if (n == 1) return c;
    if (n < 0 && errno == EINTR) continue;
    throw Error("the terminal closed before the wizard finished; nothing was saved", {}, ExitStatus::Usage);
  }
}

bool byteWithin(int milliseconds) {
  pollfd p{0, POLLIN, 0};
  return ::poll(&p, 1, milliseconds) > 0;
}

KeyPress readKey() {
  char c = readByte();
  switch (c) {
    case '\r':
    case '\n': return {Key::Enter};
    case 3:
    case 4: return {Key::Interrupt};
    case 127:
    case 8: return {Key::Backspace};
    case 21: return {Key::KillLine};
    case 27: {
      if (!byteWithin(50)) return {Key::Other};  // a lone Escape
      char introducer = readByte();
      if (introducer != '[' && introducer != 'O') return {Key::Other};
      char final_byte = readByte();
      while (final_byte >= '0' && final_byte <= '9') final_byte = readByte();  // e.g. ESC[1;5A
      if (final_byte == ';') final_byte = readByte();
      if (final_byte == 'A') return {Key::Up};
      if (final_byte == 'B') return {Key::Down};
      return {Key::Other};
    }
    default: return {Key::Other, c};
  }
}

int terminalWidth() {
  winsize ws{};
  if (::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

[[noreturn]] void interrupted() {
  out(std::string(kShowCursor) + "\r\n");
  throw Interrupted("interrupted; no configuration was saved");
}

class TerminalPrompter final : public Prompter {
 public:
  size_t choose(std::string_view prompt, const std::vector<std::string>& choices, size_t default_index) override {
    RawMode raw;
    out("\r" + std::string(static_cast<size_t>(terminalWidth()), '-') + "\r\n");
    out(std::string(prompt) + "\n");
    out("Please select a choice using the arrow or number keys, and selecting with enter\n");
    out(kHideCursor);
    size_t selected = default_index;
    draw(choices, selected, true);
    while (true) {
      KeyPress k = readKey();
      if (k.key == Key::Interrupt) interrupted();
      if (k.key == Key::Enter) break;
      if (k.key == Key::Up && selected > 0) --selected;
      if (k.key == Key::Down && selected + 1 < choices.size()) ++selected;
      if (k.key == Key::Other && k.ch >= '0' && k.ch <= '9' && static_cast<size_t>(k.ch - '0') < choices.size()) {
        selected = static_cast<size_t>(k.ch - '0');
      }
      draw(choices, selected, false);
    }
    // Erase the choices and the instruction line; leave the question and the answer.
    out("\x1b[" + std::to_string(choices.size() + 1) + "A\r\x1b[J");
    out(std::string(kGreen) + choices[selected] + kReset + "\n" + kShowCursor);
    return selected;
  }

  std::string readLine(std::string_view prompt) override {
    RawMode raw;
    out(prompt);
    std::string line;
    while (true) {
      KeyPress k = readKey();
      switch (k.key) {
        case Key::Enter: out("\r\n"); return line;
        case Key::Interrupt: interrupted();
        case Key::Backspace: eraseLast(line); break;
        case Key::KillLine:
          while (!line.empty()) eraseLast(line);
          break;
        case Key::Other:
          if (static_cast<unsigned char>(k.ch) >= 0x20) {
            line += k.ch;
            out(std::string_view(&k.ch, 1));
          }
          break;
        default: break;
      }
    }
  }

  void say(std::string_view line) override { out(std::string(line) + "\n"); }

 private:
  static void draw(const std::vector<std::string>& choices, size_t selected, bool first) {
    std::string frame;
    if (!first) frame += "\x1b[" + std::to_string(choices.size()) + "A";
    for (size_t i = 0; i < choices.size(); ++i) {
      frame += "\r\x1b[2K";
      frame += i == selected ? std::string(" \xE2\x9E\x94 ") + kGreen + choices[i] + kReset : "    " + choices[i];
      frame += "\n";
    }
    out(frame);
  }

  // Removes one UTF-8 character from the end of the line and from the screen.
  static void eraseLast(std::string& line) {
    if (line.empty()) return;
    while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) {
      line.pop_back();
    }
    if (!line.empty()) line.pop_back();
    out("\b \b");
  }
};

}  // namespace

std::unique_ptr<Prompter> makeTerminalPrompter() { return std::make_unique<TerminalPrompter>(); }

}  // namespace accel
