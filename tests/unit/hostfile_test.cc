// SPDX-License-Identifier: Apache-2.0
// DeepSpeed's hostfile and resource filters (lib/launch/settings/hostfile.h): the examples of DeepSpeed's
// launcher (module deepspeed.launcher.runner) and of its unit tests (test_run), and every input
// refused with a message that names where it is wrong.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "lib/common/error.h"
#include "lib/launch/settings/hostfile.h"
#include "tests/support/errors.h"

using namespace accel;
using namespace accel::launch::settings;
using accel::test::usageError;
using Catch::Matchers::Contains;

namespace {

std::vector<HostSlots> pool2x4() { return parseHostfile("worker-0 slots=4\nworker-1 slots=4\n", "hosts"); }

std::vector<HostSlots> select(const std::vector<HostSlots>& pool, const std::string& include,
                              const std::string& exclude = "") {
  HostFilter f;
  f.include = include;
  f.exclude = exclude;
  return selectHosts(pool, f);
}

std::vector<HostSlots> limit(const std::vector<HostSlots>& pool, long long nodes, long long gpus) {
  HostFilter f;
  f.num_nodes = nodes;
  f.num_gpus = gpus;
  return selectHosts(pool, f);
}

HostSlots host(const std::string& name, std::vector<int> slots, int line) { return {name, std::move(slots), line}; }

}  // namespace

TEST_CASE("hostfile: DeepSpeed's good hostfile, with blanks, comments and an IP", "[launch][hostfile]") {
  const auto hosts = parseHostfile(
      "\n    worker-1 slots=2\n    worker-2 slots=2\n\n    localhost slots=1\n    123.23.12.10 slots=2\n\n"
      "    #worker-1 slots=3\n    # this is a comment\n\n    ",
      "hf");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0] == host("worker-1", {0, 1}, 2));
  CHECK(hosts[1] == host("worker-2", {0, 1}, 3));
  CHECK(hosts[2] == host("localhost", {0}, 5));
  CHECK(hosts[3] == host("123.23.12.10", {0, 1}, 6));
}

TEST_CASE("hostfile: trailing comments, tabs, CRLF and leading zeros", "[launch][hostfile]") {
  const auto hosts = parseHostfile("a\tslots=04   # four GPUs\r\nb  slots=1#x\r\n# end", "hf");
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[0] == host("a", {0, 1, 2, 3}, 1));
  CHECK(hosts[1] == host("b", {0}, 2));
}

TEST_CASE("hostfile: malformed lines are quoted with PATH:LINE", "[launch][hostfile]") {
  for (const char* line : {"this is bad slots=1", "missingslots", "worker-0 slots=4 worker-1 slots=4",
                           "worker-0 gpus=4", "worker-0 slots = 4", "slots=4"}) {
    INFO(line);
    const auto e = usageError([&] { parseHostfile(std::string("ok slots=1\n") + line + "\n", "/etc/hf"); });
    CHECK_THAT(e.what(), Contains("/etc/hf:2: cannot read '") && Contains(line));
    CHECK_THAT(e.hint(), Contains("HOST slots=N"));
  }
}

TEST_CASE("hostfile: a host beginning with '-' is refused, never passed to ssh as an option", "[launch][hostfile]") {
  CHECK_THAT(usageError([] { parseHostfile("ok slots=1\n-oProxyCommand=x slots=1\n", "hf"); }).what(),
             Contains("hf:2: host '-oProxyCommand=x' begins with '-'"));
}

TEST_CASE("hostfile: slot counts that are zero, not a number or absurdly large", "[launch][hostfile]") {
  CHECK_THAT(usageError([] { parseHostfile("w slots=0", "hf"); }).what(),
             Contains("hf:1: slots of host 'w': '0' is out of range: it must be from 1 to 4096"));
  CHECK_THAT(usageError([] { parseHostfile("w slots=4096\nv slots=4097", "hf"); }).what(),
             Contains("hf:2:") && Contains("'4097' is out of range"));
  CHECK_THAT(usageError([] { parseHostfile("w slots=99999999999999999999999", "hf"); }).what(),
             Contains("hf:1:") && Contains("out of range"));
  for (const char* bad : {"w slots=", "w slots=4x", "w slots=-1", "w slots=+4", "w slots=2.5"}) {
    INFO(bad);
    CHECK_THAT(usageError([&] { parseHostfile(bad, "hf"); }).what(),
               Contains("hf:1: slots of host 'w'") && Contains("is not a number"));
  }
}

TEST_CASE("hostfile: a host listed twice names both lines", "[launch][hostfile]") {
  const auto e = usageError([] { parseHostfile("worker-1 slots=2\nworker-2 slots=1\nworker-1 slots=1\n", "hf"); });
  CHECK_THAT(e.what(), Contains("hf:3: host 'worker-1' is listed twice (lines 1 and 3)"));
}

TEST_CASE("hostfile: a file with no hosts", "[launch][hostfile]") {
  for (const char* text : {"", "\n    \n", "# only\n  # comments\n"}) {
    CHECK_THAT(usageError([&] { parseHostfile(text, "/x/hf"); }).what(),
               Contains("/x/hf: the hostfile lists no hosts"));
  }
}

TEST_CASE("hostfile: reading a file names the path and where it came from", "[launch][hostfile]") {
  const auto dir = std::filesystem::temp_directory_path() / ("accel_hostfile_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "hostfile").string(), bad = (dir / "bad").string();
  std::ofstream(good) << "worker-0 slots=2\n";
  std::ofstream(bad) << "worker-0 slots=2\nworker-0 slots=2\n";
  CHECK(readHostfile(good, "--hostfile") == std::vector<HostSlots>{host("worker-0", {0, 1}, 1)});
  CHECK_THAT(usageError([&] { readHostfile(bad, "--hostfile"); }).what(), Contains(bad + ":2:"));
  const auto missing = usageError([&] { readHostfile((dir / "nope").string(), "deepspeed_hostfile (config file)"); });
  CHECK_THAT(missing.what(),
             Contains("deepspeed_hostfile (config file) '" + (dir / "nope").string() + "': no such file"));
  CHECK_THAT(usageError([&] { readHostfile(dir.string(), "--hostfile"); }).what(),
             Contains("--hostfile '" + dir.string() + "': is a directory"));
  if (geteuid() != 0) {  // root reads any file
    std::filesystem::permissions(good, std::filesystem::perms::none);
    CHECK_THAT(usageError([&] { readHostfile(good, "--hostfile"); }).what(),
               Contains("--hostfile '" + good + "': cannot read it"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("hostfile: no filter keeps the pool", "[launch][hostfile]") {
  CHECK(select(pool2x4(), "") == pool2x4());
  CHECK(limit(pool2x4(), -1, -1) == pool2x4());
}

TEST_CASE("hostfile: DeepSpeed's include and exclude examples", "[launch][hostfile]") {
  const auto pool = pool2x4();
  // All slots of worker-0, slots 0 and 2 of worker-1.
  CHECK(select(pool, "worker-0@worker-1:0,2") ==
        std::vector<HostSlots>{host("worker-0", {0, 1, 2, 3}, 1), host("worker-1", {0, 2}, 2)});
  CHECK(select(pool, "", "worker-1:0") ==
        std::vector<HostSlots>{host("worker-0", {0, 1, 2, 3}, 1), host("worker-1", {1, 2, 3}, 2)});
  CHECK(select(pool, "", "worker-1") == std::vector<HostSlots>{host("worker-0", {0, 1, 2, 3}, 1)});
  CHECK(select(pool, "worker-1:0,3") == std::vector<HostSlots>{host("worker-1", {0, 3}, 2)});
  CHECK(select(pool, "", "worker-0:0,1@worker-1:3") ==
        std::vector<HostSlots>{host("worker-0", {2, 3}, 1), host("worker-1", {0, 1, 2}, 2)});
  CHECK(select(pool, "worker-0") == std::vector<HostSlots>{host("worker-0", {0, 1, 2, 3}, 1)});
}

TEST_CASE("hostfile: repeated names merge, hosts keep the hostfile's order, slots ascend", "[launch][hostfile]") {
  const auto pool = pool2x4();
  CHECK(select(pool, "worker-0:1,1") == std::vector<HostSlots>{host("worker-0", {1}, 1)});
  CHECK(select(pool, "worker-0:1@worker-0:0,1") == std::vector<HostSlots>{host("worker-0", {0, 1}, 1)});
  CHECK(select(pool, "worker-1:3,0@worker-0:2") ==
        std::vector<HostSlots>{host("worker-0", {2}, 1), host("worker-1", {0, 3}, 2)});
  // A bare name means the whole host, whatever else names it.
  CHECK(select(pool, "worker-0:1@worker-0") == std::vector<HostSlots>{host("worker-0", {0, 1, 2, 3}, 1)});
  CHECK(select(pool, "", "worker-0:1@worker-0") == std::vector<HostSlots>{host("worker-1", {0, 1, 2, 3}, 2)});
}

TEST_CASE("hostfile: num_nodes takes the first hosts, num_gpus the first slots", "[launch][hostfile]") {
  const auto pool = parseHostfile("a slots=4\nb slots=2\nc slots=8\n", "hf");
  CHECK(limit(pool, 2, -1) == std::vector<HostSlots>{host("a", {0, 1, 2, 3}, 1), host("b", {0, 1}, 2)});
  CHECK(limit(pool, 3, -1) == pool);
  CHECK(limit(pool, -1, 3) ==
        std::vector<HostSlots>{host("a", {0, 1, 2}, 1), host("b", {0, 1}, 2), host("c", {0, 1, 2}, 3)});
  CHECK(limit(pool, 1, 1) == std::vector<HostSlots>{host("a", {0}, 1)});
}

TEST_CASE("hostfile: include and exclude together, or beside num_nodes/num_gpus", "[launch][hostfile]") {
  const auto both = usageError([] { select(pool2x4(), "worker-0", "worker-1"); });
  CHECK_THAT(both.what(), Contains("--include 'worker-0' and --exclude 'worker-1' cannot both be given"));
  HostFilter f;
  f.exclude = "worker-1";
  f.exclude_origin = "exclude (config file)";
  f.num_gpus = 1;
  CHECK_THAT(usageError([&] { selectHosts(pool2x4(), f); }).what(),
             Contains("--num_gpus cannot be given with exclude (config file)"));
  f = HostFilter{};
  f.include = "worker-0";
  f.num_nodes = 1;
  f.num_nodes_origin = "--num_machines";
  CHECK_THAT(usageError([&] { selectHosts(pool2x4(), f); }).what(),
             Contains("--num_machines cannot be given with --include"));
}

TEST_CASE("hostfile: unknown hosts and slots name the filter and list the pool", "[launch][hostfile]") {
  const auto pool = pool2x4();
  const auto jeff = usageError([&] { select(pool, "jeff"); });
  CHECK_THAT(jeff.what(), Contains("--include 'jeff': host 'jeff' is not in the hostfile"));
  CHECK_THAT(jeff.hint(), Contains("worker-0 (slots 0-3), worker-1 (slots 0-3)"));
  CHECK_THAT(usageError([&] { select(pool, "", "worker-2"); }).hint(), Contains("did you mean 'worker-0'?"));
  const auto slot = usageError([&] { select(pool, "worker-1:4"); });
  CHECK_THAT(slot.what(), Contains("--include 'worker-1:4': host 'worker-1' has no slot 4"));
  CHECK_THAT(slot.hint(), Contains("'worker-1' has slots 0-3 (hostfile line 2)"));
  CHECK_THAT(usageError([&] { select(pool, "", "worker-1:4"); }).what(), Contains("--exclude 'worker-1:4'"));
  CHECK_THAT(usageError([&] { select(pool, "", "worker-1@worker-0:1@5"); }).what(), Contains("host '5'"));
  const std::vector<HostSlots> gappy = {host("n", {0, 2, 3, 5}, 0)};
  const auto e = usageError([&] { select(gappy, "n:1"); });
  CHECK(e.hint() == "'n' has slots 0,2-3,5");
}

TEST_CASE("hostfile: a long pool is listed in part", "[launch][hostfile]") {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "node" + std::to_string(i) + " slots=1\n";
  const auto hint = usageError([&] { select(parseHostfile(text, "hf"), "gpu9"); }).hint();
  CHECK_THAT(hint, Contains("node7 (slots 0), and 12 more"));
  CHECK_THAT(hint, !Contains("node8 "));
}

TEST_CASE("hostfile: empty and malformed filters", "[launch][hostfile]") {
  const auto pool = pool2x4();
  for (const char* bad : {"@", "worker-0@", "@worker-0", "worker-0@@worker-1", ":0", "worker-0:1:2", " worker-0"}) {
    INFO(bad);
    CHECK_THAT(usageError([&] { select(pool, bad); }).what(),
               Contains(std::string("--include '") + bad + "': cannot read entry"));
  }
  for (const char* bad : {"worker-0:", "worker-0:1,", "worker-0:a", "worker-0:-1", "worker-0:99999999999999999999"}) {
    INFO(bad);
    CHECK_THAT(usageError([&] { select(pool, "", bad); }).what(),
               Contains(std::string("--exclude '") + bad + "': a slot of entry"));
  }
  CHECK_THAT(usageError([&] { select(pool, "  "); }).what(), Contains("--include '  ': the filter is empty"));
}

TEST_CASE("hostfile: a selection that leaves no host", "[launch][hostfile]") {
  const auto pool = pool2x4();
  CHECK_THAT(usageError([&] { select(pool, "", "worker-0@worker-1"); }).what(),
             Contains("--exclude 'worker-0@worker-1': no host is left to run on"));
  CHECK_THAT(usageError([&] { select(pool, "", "worker-0@worker-1:0,1,2,3"); }).what(), Contains("no host is left"));
  CHECK_THAT(usageError([&] { selectHosts({}, HostFilter{}); }).what(), Contains("no hosts to run on"));
}

TEST_CASE("hostfile: num_nodes and num_gpus out of range", "[launch][hostfile]") {
  const auto pool = pool2x4();
  const auto many = usageError([&] { limit(pool, 3, -1); });
  CHECK_THAT(many.what(), Contains("--num_nodes 3: the hostfile has only 2 hosts"));
  CHECK_THAT(many.hint(), Contains("at most 2"));
  CHECK_THAT(usageError([&] { limit(pool, 0, -1); }).what(), Contains("--num_nodes 0: it must be at least 1"));
  CHECK_THAT(usageError([&] { limit(pool, -2, -1); }).what(), Contains("--num_nodes -2"));
  CHECK_THAT(usageError([&] { limit(pool, -1, 0); }).what(), Contains("--num_gpus 0: it must be at least 1"));
  HostFilter f;
  f.num_nodes = 5;
  f.num_nodes_origin = "num_machines (config file)";
  CHECK_THAT(usageError([&] { selectHosts(pool, f); }).what(),
             Contains("num_machines (config file) 5: the hostfile has only 2 hosts"));
}
