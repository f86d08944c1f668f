// SPDX-License-Identifier: Apache-2.0
// torchrun's log line prefix template as accel expands it: what Python's
// string.Template(t).safe_substitute(role_name=..., rank=..., local_rank=..., hostname=...) gives
// for the same template, except that a name it does not know is refused.
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/launch/settings/line_prefix.h"

using namespace accel;
using namespace accel::launch::settings;

namespace {
const LinePrefixValues kWorker{"trainer", 5, 1, "node7"};
}

TEST_CASE("line prefix: names, braced or not, and the $$ escape", "[launch][logs]") {
  CHECK(expandLinePrefix("[${role_name}${local_rank}]:", kWorker) == "[trainer1]:");
  CHECK(expandLinePrefix("${hostname}:$rank: ", kWorker) == "node7:5: ");
  CHECK(expandLinePrefix("$rank$local_rank", kWorker) == "51");
  CHECK(expandLinePrefix("$$rank ${rank}$$", kWorker) == "$rank 5$");
  // A `$` before something that is not a name stays, as in string.Template.
  CHECK(expandLinePrefix("$ cost $5 $", kWorker) == "$ cost $5 $");
  CHECK(expandLinePrefix("", kWorker).empty());
}

TEST_CASE("line prefix: an unknown or unclosed name is a usage error naming it", "[launch][logs][errors]") {
  CHECK_THROWS_WITH(expandLinePrefix("[${node}]", kWorker, "--log_line_prefix_template"),
                    "--log_line_prefix_template '[${node}]': unknown name ${node}");
  // `$rank0` is the name rank0, as Python reads it, not ${rank} and a 0.
  CHECK_THROWS_WITH(expandLinePrefix("$rank0", kWorker, "X"), "X '$rank0': unknown name ${rank0}");
  CHECK_THROWS_WITH(expandLinePrefix("${RANK}", kWorker, "X"), "X '${RANK}': unknown name ${RANK}");
  CHECK_THROWS_WITH(expandLinePrefix("a ${rank", kWorker, "X"), "X 'a ${rank': '${rank' has no closing }");
  CHECK_THROWS_AS(expandLinePrefix("${}", kWorker, "X"), UsageError);
}
