// SPDX-License-Identifier: Apache-2.0
// output_worker: a worker whose output has the shapes a console must draw (the console tests,
// tests/cli/launch_output_test.cc). Standard library + POSIX; every write goes straight to its
// file descriptor, as an unbuffered program's does. One mode per run:
//   frames N S        N progress frames "\rframe K" over S seconds, then "\n"
//   open S            "open", S seconds later " closed\n"
//   tty               "isatty=B columns=C" for stdout (C from its terminal, 0 off one), then
//                     "\x1b[31mred\x1b[0m" when stdout is a terminal, "plain" otherwise
//   random SEED B F   about B bytes to stdout in random pieces: partial lines, "\r" frames and
//                     lines of up to 1 MB, every byte also written to the file F.RANK (RANK from
//                     the environment; for the test to compare with what the launcher kept), and
//                     a line on stderr now and then
// Anything else: a message on stderr, exit 64.
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>

namespace {

void put(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) std::exit(3);
    done += static_cast<size_t>(n);
  }
}

void sleepSeconds(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

int frames(int n, double seconds) {
  for (int k = 0; k < n; ++k) {
    put(1, "\rframe " + std::to_string(k));
    sleepSeconds(seconds / n);
  }
  put(1, "\n");
  return 0;
}

int tty() {
  winsize size{};
  const bool terminal = ::isatty(1) == 1;
  const int columns = terminal && ::ioctl(1, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
  put(1, "isatty=" + std::to_string(terminal) + " columns=" + std::to_string(columns) + "\n");
  put(1, terminal ? "\x1b[31mred\x1b[0m\n" : "plain\n");
  return 0;
}

// A piece of output of one of the shapes, chosen at random.
std::string piece(std::mt19937& rng) {
  const int shape = std::uniform_int_distribution<int>(0, 9)(rng);
  if (shape < 4) return "partial " + std::to_string(rng() % 1000);  // no newline
  if (shape < 7) return "\rframe " + std::to_string(rng() % 1000);
  if (shape < 9) return " end\n";
  const size_t length = std::uniform_int_distribution<size_t>(1, 1 << 20)(rng);
  return std::string(length, static_cast<char>('a' + rng() % 26)) + "\n";
}

int random(unsigned seed, size_t bytes, const std::string& copy_path) {
  const char* rank = std::getenv("RANK");
  std::mt19937 rng(seed + static_cast<unsigned>(rank ? std::atoi(rank) : 0));
  std::ofstream copy(copy_path + "." + (rank ? rank : "0"), std::ios::binary);
  size_t written = 0;
  for (int k = 0; written < bytes; ++k) {
    const std::string text = piece(rng);
    put(1, text);
    copy << text;
    written += text.size();
    if (k % 50 == 0) put(2, "stderr note " + std::to_string(k) + "\n");
    if (k % 20 == 0) sleepSeconds(0.001);  // let the launcher see pieces, not one stream
  }
  put(1, "\n");
  copy << "\n";
  return copy.good() ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "frames" && argc == 4) return frames(std::atoi(argv[2]), std::atof(argv[3]));
  if (mode == "open" && argc == 3) {
    put(1, "open");
    sleepSeconds(std::atof(argv[2]));
    put(1, " closed\n");
    return 0;
  }
  if (mode == "tty" && argc == 2) return tty();
  if (mode == "random" && argc == 5) {
    return random(static_cast<unsigned>(std::atoi(argv[2])), std::strtoull(argv[3], nullptr, 10), argv[4]);
  }
  std::fprintf(stderr, "output_worker: unknown arguments (see the header of tests/workers/output_worker.cc)\n");
  return 64;
}
