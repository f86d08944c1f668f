// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/stacks/stack_summary.h"

#include <regex>
#include <vector>

#include "lib/common/strings.h"
#include "lib/launch/stacks/stack_tools.h"

namespace accel::launch::stacks {

namespace {

struct Frame {
  std::string function, file, line;
  std::string text() const { return file.empty() ? function : function + " (" + file + ":" + line + ")"; }
};

// The frames of py-spy's first "MainThread" block, else of its first thread.
std::vector<Frame> pythonMainFrames(const std::string& dump) {
  static const std::regex frame(R"(^\s+(.+) \((.+):(\d+)\)\s*$)");
  std::vector<Frame> first, main;
  std::vector<Frame>* into = nullptr;
  bool seen_main = false;
  for (const std::string& line : split(dump, '\n')) {
    if (startsWith(line, "Thread ")) {
      const bool is_main = line.find("\"MainThread\"") != std::string::npos && !seen_main;
      seen_main = seen_main || is_main;
      into = is_main ? &main : first.empty() ? &first : nullptr;
      continue;
    }
    std::smatch m;
    if (into && std::regex_match(line, m, frame)) into->push_back({m[1], m[2], m[3]});
  }
  return main.empty() ? first : main;
}

const std::string kAnonymous = "(anonymous namespace)::";

// A gdb frame line: "#0  0x... in f (...) at file:line", "#1  f (...) at file:line", or without
// a source: "#2  0x... in f () from /lib/...". eu-stack: "#0  0x... f".
bool nativeFrame(const std::string& line, Frame& f) {
  static const std::regex gdb(R"(^#\d+\s+(?:0x[0-9a-f]+ in )?(.+?) \(.*\)(?: at (\S+):(\d+))?.*$)");
  static const std::regex eu(R"(^#\d+\s+0x[0-9a-f]+\s+(\S+).*$)");
  std::smatch m;
  if (std::regex_match(line, m, gdb)) {
    f = {m[1], m[2], m[3]};
    // Unoptimized builds name a function of an anonymous namespace with it; optimized ones, which
    // inline it, do not: the same function reads the same.
    for (size_t at; (at = f.function.find(kAnonymous)) != std::string::npos;) f.function.erase(at, kAnonymous.size());
    return true;
  }
  if (std::regex_match(line, m, eu)) {
    f = {m[1], "", ""};
    return true;
  }
  return false;
}

bool systemSource(const std::string& file) {
  return startsWith(file, "../") || startsWith(file, "./") || startsWith(file, "/usr/");
}

// What libaccel_runtime says the rank is in (stack_tools.h's mark), or "".
std::string collectiveNow(const std::string& text) {
  for (const std::string& line : split(text, '\n')) {
    if (startsWith(line, kCollectiveNowMark)) return trim(line.substr(std::string(kCollectiveNowMark).size()));
  }
  return "";
}

// The innermost frame of the main thread with a source line outside the C library, else its
// innermost function.
std::string innermostNative(const std::string& text) {
  std::vector<Frame> frames;
  bool in_first_thread = true, seen_thread = false;
  for (const std::string& line : split(text, '\n')) {
    if (startsWith(line, "Thread ") || startsWith(line, "TID ")) {
      in_first_thread = !seen_thread || startsWith(line, "Thread 1 ");
      if (startsWith(line, "Thread 1 ")) frames.clear();
      seen_thread = true;
      continue;
    }
    Frame f;
    if (in_first_thread && nativeFrame(line, f)) frames.push_back(f);
  }
  for (const Frame& f : frames) {
    if (!f.file.empty() && !systemSource(f.file)) return f.text();
  }
  return frames.empty() ? "" : frames.front().function;
}

}  // namespace

std::string summarizePythonStack(const std::string& dump) {
  const std::vector<Frame> frames = pythonMainFrames(dump);
  if (frames.empty()) return "";
  std::string out = frames.front().text();
  if (frames.front().file.find('/') == std::string::npos) return out;
  for (const Frame& f : frames) {
    if (f.file.find('/') == std::string::npos) return out + " from " + f.text();
  }
  return out;
}

std::string summarizeNativeStack(const std::string& text) {
  const std::string where = innermostNative(text), collective = collectiveNow(text);
  if (collective.empty()) return where;
  return where.empty() ? collective : where + "; " + collective;
}

}  // namespace accel::launch::stacks
