// SPDX-License-Identifier: Apache-2.0
// The etcd rendezvous' pure parts: base64 as etcd's gateway carries keys, --rdzv_conf's etcd
// keys, and the plan --rdzv_backend etcd makes (machine 0 elected, a free job port, the server).
#include <catch2/catch.hpp>

#include "lib/common/base64.h"
#include "lib/common/error.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/rdzv_conf.h"
#include "tests/support/fake_facts.h"

using namespace accel;
using namespace accel::test;
using namespace accel::launch::settings;

TEST_CASE("base64: RFC 4648's vectors both ways, and text that is not base64", "[etcd]") {
  const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                    {"f", "Zg=="},
                                                                    {"fo", "Zm8="},
                                                                    {"foo", "Zm9v"},
                                                                    {"foob", "Zm9vYg=="},
                                                                    {"fooba", "Zm9vYmE="},
                                                                    {"foobar", "Zm9vYmFy"},
                                                                    {std::string("\0\xff/", 3), "AP8v"}};
  for (const auto& [bytes, text] : vectors) {
    CHECK(base64Encode(bytes) == text);
    CHECK(base64Decode(text) == bytes);
  }
  CHECK_FALSE(base64Decode("Zg="));
  CHECK_FALSE(base64Decode("Z!=="));
}

TEST_CASE("rdzv_conf: the etcd keys are read for etcd, accepted and unused for the others", "[etcd]") {
  const RdzvConf c = parseRdzvConf(
      "protocol=HTTPS,cacert=/ca.pem,ssl_cert=/c.pem,key=/k.pem,etcd_prefix=/jobs,read_timeout=7", "--rdzv_conf", true);
  CHECK(c.https == true);
  CHECK(c.ca_cert == "/ca.pem");
  CHECK(c.ssl_cert == "/c.pem");
  CHECK(c.ssl_cert_key == "/k.pem");
  CHECK(c.etcd_prefix == "/jobs");
  CHECK(c.read_timeout == 7);
  CHECK(c.unused.empty());
  CHECK(parseRdzvConf("protocol=https,read_timeout=7", "--rdzv_conf").unused ==
        std::vector<std::string>{"protocol", "read_timeout"});
  CHECK_THROWS_WITH(parseRdzvConf("protocol=ftp", "--rdzv_conf", true),
                    Catch::Contains("--rdzv_conf protocol=ftp: 'ftp' is not http or https"));
  CHECK_THROWS_WITH(parseRdzvConf("etcd_prefix=jobs", "PET_RDZV_CONF", true),
                    Catch::Contains("PET_RDZV_CONF etcd_prefix=jobs: a prefix starts with '/'"));
  CHECK_THROWS_WITH(parseRdzvConf("read_timeout=soon", "--rdzv_conf", true), Catch::Contains("'soon' is not"));
}

TEST_CASE("plan: --rdzv_backend etcd elects machine 0, ignores a node rank, and picks a free job port",
          "[etcd][plan]") {
  FakeMachine m(0);
  const auto p =
      planFor({"--cpu", "--nnodes", "2:4", "--nproc_per_node", "2", "--node_rank", "1", "--rdzv_backend", "etcd-v2",
               "--rdzv_endpoint", "10.9.8.7", "--rdzv_conf", "protocol=https,ca_cert=/ca.pem,etcd_prefix=/jobs"},
              m);
  REQUIRE(p.etcd);
  CHECK(p.etcd->server.host == "10.9.8.7");
  CHECK(p.etcd->server.port == 2379);
  CHECK(p.etcd->server.tls);
  CHECK(p.etcd->server.files.ca_cert == "/ca.pem");
  CHECK(p.etcd->prefix == "/jobs");
  CHECK(p.dynamic);
  CHECK(p.machine_rank == -1);
  CHECK(p.min_machines == 2);
  CHECK(p.max_machines == 4);
  CHECK(p.job_port == 0);
  CHECK_THROWS_WITH(planFor({"--cpu", "--nnodes", "2", "--rdzv_backend", "etcd", "--rdzv_endpoint", "e:2379",
                             "--rdzv_conf", "ca_cert=/ca.pem"},
                            m),
                    Catch::Contains("gives certificates with protocol http"));
}
