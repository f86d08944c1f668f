// SPDX-License-Identifier: Apache-2.0
// `accel config` on a real pseudo-terminal: arrow and digit keys move the highlight, Enter
// selects, fields are edited in place, Ctrl-C aborts with exit 130 and saves nothing.
#include <catch2/catch.hpp>

#include "tests/support/process.h"
#include "tests/support/pty.h"

using accel::test::accelBinary;
using accel::test::PtySession;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

const std::string kDown = "\x1b[B";
const std::string kUp = "\x1b[A";
const std::string kMenuLine = "Please select a choice using the arrow or number keys, and selecting with enter";

// Waits for a question, then types the answer.
void answer(PtySession& tty, const std::string& question, const std::string& keys) {
  INFO("waiting for: " << question << "\n--- output so far ---\n" << tty.output());
  REQUIRE(tty.waitFor(question));
  tty.send(keys);
}

}  // namespace

TEST_CASE("pty wizard: arrows, digits and Enter write the multi-GPU fp16 file", "[wizard][pty]") {
  TempDir dir;
  PtySession tty({accelBinary(), "config", "--config_file", dir.file("c.yaml")}, {{"HOME", dir.path()}});
  REQUIRE(tty.waitFor("Which type of machine are you using?"));
  answer(tty, kMenuLine, kDown + kDown + kDown + kUp + kDown + "\r");  // clamps at the last row
  answer(tty, "How many different machines", "\r");
  answer(tty, "checked while running for errors", "\r");
  answer(tty, "torch dynamo?", "\r");
  answer(tty, "use DeepSpeed?", "\r");
  answer(tty, "FullyShardedDataParallel?", "\r");
  answer(tty, "Megatron-LM ?", "\r");
  answer(tty, "How many GPU(s) should be used",
         "5\x7f"
         "4\r");  // backspace corrects 5 to 4
  answer(tty, "(by id)", "\r");
  answer(tty, "numa efficiency?", "\r");
  answer(tty, "Do you wish to use mixed precision?", "3" + kUp + kUp + "\r");  // digit, arrows
  REQUIRE(tty.wait() == 0);
  CHECK(slurp(dir.file("c.yaml")) == slurp(ACCEL_SOURCE_DIR "/tests/golden/multi_gpu_4_fp16.yaml"));
  const std::string& screen = tty.output();
  CHECK(screen.find(" \xE2\x9E\x94 \x1b[32mNo distributed training") != std::string::npos);
  CHECK(screen.find("\x1b[32mmulti-GPU\x1b[0m\r\n") != std::string::npos);  // the chosen value
  CHECK(screen.find("\x1b[?25l") != std::string::npos);                     // cursor hidden in menus
  CHECK(screen.find("accel configuration saved at " + dir.file("c.yaml")) != std::string::npos);
}

TEST_CASE("pty wizard: yes/no fields re-ask on y and take Enter as the default", "[wizard][pty]") {
  TempDir dir;
  PtySession tty({accelBinary(), "config", "--config_file", dir.file("c.yaml")}, {{"HOME", dir.path()}});
  answer(tty, kMenuLine, "\r");
  answer(tty, "CPU only", "y\r");
  answer(tty, "Please enter yes or no.", "yes\r");
  answer(tty, "torch dynamo?", "\r");
  answer(tty, "use DeepSpeed?", "\r");
  answer(tty, "Do you wish to use mixed precision?", "2\r");
  REQUIRE(tty.wait() == 0);
  std::string file = slurp(dir.file("c.yaml"));
  CHECK(file.find("use_cpu: true\n") != std::string::npos);
  CHECK(file.find("mixed_precision: bf16\n") != std::string::npos);
}

TEST_CASE("pty wizard: Ctrl-C in a menu aborts with 130 and keeps the old file", "[wizard][pty][failure]") {
  TempDir dir;
  const std::string old = "distributed_type: MULTI_CPU\nnum_processes: 3\n";
  dir.write("c.yaml", old);
  PtySession tty({accelBinary(), "config", "--config_file", dir.file("c.yaml")}, {{"HOME", dir.path()}});
  answer(tty, kMenuLine, kDown + "\x03");
  CHECK(tty.wait() == 130);
  CHECK(tty.output().find("interrupted; no configuration was saved") != std::string::npos);
  CHECK(tty.output().find("\x1b[?25h") != std::string::npos);  // cursor shown again
  CHECK(slurp(dir.file("c.yaml")) == old);
}

TEST_CASE("pty wizard: Ctrl-C in a text field aborts too", "[wizard][pty][failure]") {
  TempDir dir;
  PtySession tty({accelBinary(), "config", "--config_file", dir.file("c.yaml")}, {{"HOME", dir.path()}});
  answer(tty, kMenuLine, "1\r");
  answer(tty, "How many different machines", "12\x03");
  CHECK(tty.wait() == 130);
  CHECK(slurp(dir.file("c.yaml")).empty());
}
