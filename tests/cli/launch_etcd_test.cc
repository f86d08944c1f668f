// SPDX-License-Identifier: Apache-2.0
// The etcd rendezvous (--rdzv_backend etcd, lib/launch/job/etcd_link.h) against a real etcd
// (Debian's etcd-server) started by each case on loopback: machine 0 is elected there, and when
// its launcher is killed a survivor is elected and the job goes on; two run ids on one etcd never
// mix and no key holds the job's token; TLS with a user; an endpoint that is not etcd, or does
// not answer, is a clear error naming it. Real `accel` processes, real sockets.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "tests/support/process.h"
#include "tests/support/skip.h"

using namespace accel::test;

namespace {

// A one-member etcd on loopback, in `dir`; `tls`: served over https with `dir`/server.pem.
struct Etcd {
  int port = freeLoopbackPort(), peer = freeLoopbackPort();
  std::unique_ptr<BackgroundProcess> server;

  Etcd(const TempDir& dir, bool tls = false) {
    const std::string scheme = tls ? "https" : "http";
    const std::string client = scheme + "://127.0.0.1:" + std::to_string(port);
    const std::string peers = "http://127.0.0.1:" + std::to_string(peer);
    std::vector<std::string> argv = {"etcd",
                                     "--name",
                                     "one",
                                     "--data-dir",
                                     dir.path() + "/etcd-" + std::to_string(port),
                                     "--listen-client-urls",
                                     client,
                                     "--advertise-client-urls",
                                     client,
                                     "--listen-peer-urls",
                                     peers,
                                     "--initial-advertise-peer-urls",
                                     peers,
                                     "--initial-cluster",
                                     "one=" + peers};
    if (tls) {
      for (const char* a : {"--cert-file", "--key-file"})
        argv.push_back(a), argv.push_back(dir.path() + (a[2] == 'c' ? "/server.pem" : "/server.key"));
    }
    server = std::make_unique<BackgroundProcess>(argv);
    REQUIRE(server->waitForOutput("ready to serve client requests", 1, 20000));
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port); }
  // etcdctl's answer, over the same scheme.
  RunResult ctl(const std::vector<std::string>& args, const std::vector<std::string>& tls = {}) const {
    std::vector<std::string> argv = {"etcdctl", "--endpoints", (tls.empty() ? "http://" : "https://") + endpoint()};
    argv.insert(argv.end(), tls.begin(), tls.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, {}, {}, 20000);
  }
};

bool haveEtcd() {
  if (run({"sh", "-c", "command -v etcd && command -v etcdctl"}).exit_code == 0) return true;
  skip("etcd-server and etcd-client are not installed (apt-get install etcd-server etcd-client)");
  return false;
}

// Each worker says its place, then works for `seconds`.
std::vector<std::string> etcdWorker(int seconds) {
  return {"--no_python", "sh", "-c",
          "echo \"place rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR restarts=$TORCHELASTIC_RESTART_COUNT\"; "
          "sleep " +
              std::to_string(seconds)};
}

using EtcdLauncher = std::unique_ptr<BackgroundProcess>;
EtcdLauncher startOnEtcd(const Etcd& etcd, const TempDir& dir, const std::string& nnodes,
                         const std::vector<std::string>& program, std::vector<std::string> extra = {},
                         std::map<std::string, std::string> env = {}) {
  const auto argv =
      machineLaunch({"--cpu", "--nnodes", nnodes, "--nproc_per_node", "1", "--rdzv_backend", "etcd", "--rdzv_endpoint",
                     etcd.endpoint(), "--heartbeat_timeout", "3", "--grace_period", "2"},
                    extra, program);
  return std::make_unique<BackgroundProcess>(argv, hermeticEnv(dir, std::move(env)));
}

}  // namespace

TEST_CASE("etcd: when machine 0's launcher is killed a survivor is elected and the job goes on",
          "[launch][machines][etcd][failure]") {
  if (!haveEtcd()) return;
  TempDir dir;
  Etcd etcd(dir);
  const auto program = etcdWorker(5);
  const std::vector<std::string> id = {"--rdzv_id", "survives"};
  std::vector<EtcdLauncher> l;
  for (int i = 0; i < 3; ++i) l.push_back(startOnEtcd(etcd, dir, "2:3", program, id));
  for (auto& p : l) REQUIRE(p->waitForOutput("world=3"));
  size_t zero = 0;
  for (; zero < l.size() && !contains(l[zero]->output(), "accel: round 0: 3 machines"); ++zero) {
  }
  REQUIRE(zero < l.size());
  const auto lost_at = std::chrono::steady_clock::now();
  l[zero]->signal(SIGKILL);
  int finished = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (i == zero) continue;
    auto r = l[i]->wait(60000);
    INFO(r.err << r.out);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "was lost: its launcher's connection closed"));
    CHECK(contains(r.err, "is machine 0 now (elected in etcd at http://" + etcd.endpoint() + ")"));
    CHECK(contains(r.err, "round 1: world size 2"));
    CHECK(contains(r.out, "world=2"));
    CHECK(contains(r.out, "restarts=0"));  // a lost machine is not a failure restarted
    CHECK_FALSE(contains(r.out, "restarts=1"));
    finished += r.exit_code == 0;
  }
  CHECK(finished == 2);
  CHECK(secondsSince(lost_at) < 5 + 3 + 30);
  auto keys = etcd.ctl({"get", "--prefix", "--keys-only", "/accel/rdzv/survives/"});
  CHECK(contains(keys.out, "/accel/rdzv/survives/verdict"));
  CHECK_FALSE(contains(keys.out, "/accel/rdzv/survives/hub"));  // its lease was revoked at the end
}

TEST_CASE("etcd: two run ids on one etcd never mix, and no key holds the job's token",
          "[launch][machines][etcd][scenario]") {
  if (!haveEtcd()) return;
  TempDir dir;
  Etcd etcd(dir);
  const auto program = etcdWorker(3);
  std::vector<EtcdLauncher> l;
  for (const char* run : {"first", "second"}) {
    for (int i = 0; i < 2; ++i) {
      l.push_back(
          startOnEtcd(etcd, dir, "2", program, {"--rdzv_id", run, "--rdzv_token", "s3cret-token-" + std::string(run)}));
    }
  }
  for (auto& p : l) REQUIRE(p->waitForOutput("world=2"));
  auto keys = etcd.ctl({"get", "--prefix", "/accel/rdzv/"});
  INFO(keys.out << keys.err);
  CHECK(contains(keys.out, "/accel/rdzv/first/hub"));
  CHECK(contains(keys.out, "/accel/rdzv/second/hub"));
  CHECK(contains(keys.out, "/accel/rdzv/first/members/"));
  CHECK_FALSE(contains(keys.out, "s3cret"));
  for (auto& p : l) {
    auto r = p->wait(60000);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "world=2"));
    CHECK_FALSE(contains(r.out, "world=4"));
    CHECK(
        contains(r.err, "rendezvous in etcd at http://" + etcd.endpoint() + ": machine 0 is the launcher etcd elects"));
  }
}

TEST_CASE("etcd: over TLS with a user and password, and a wrong password is an error naming the endpoint",
          "[launch][machines][etcd]") {
  if (!haveEtcd()) return;
  TempDir dir;
  const std::string d = dir.path();
  auto made =
      run({"sh", "-c",
           "cd " + d +
               " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ca.key -out ca.pem "
               ">/dev/null 2>&1 && openssl req -newkey rsa:2048 -nodes -subj /CN=etcd -keyout server.key -out "
               "server.csr >/dev/null 2>&1 && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && openssl x509 "
               "-req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext -out "
               "server.pem >/dev/null 2>&1"});
  REQUIRE(made.exit_code == 0);
  Etcd etcd(dir, true);
  const std::vector<std::string> tls = {"--cacert", d + "/ca.pem"};
  REQUIRE(etcd.ctl({"user", "add", "root:rootpw"}, tls).exit_code == 0);
  REQUIRE(etcd.ctl({"auth", "enable"}, tls).exit_code == 0);
  const std::vector<std::string> conf = {"--rdzv_conf", "protocol=https,ca_cert=" + d + "/ca.pem", "--rdzv_id", "tls"};
  const std::map<std::string, std::string> user = {{"ACCEL_ETCD_USER", "root"}, {"ACCEL_ETCD_PASSWORD", "rootpw"}};
  auto a = startOnEtcd(etcd, dir, "2", etcdWorker(1), conf, user);
  auto b = startOnEtcd(etcd, dir, "2", etcdWorker(1), conf, user);
  auto ra = a->wait(60000);
  auto rb = b->wait(60000);
  INFO(ra.err << rb.err);
  CHECK(ra.exit_code == 0);
  CHECK(rb.exit_code == 0);
  CHECK(contains(ra.out + rb.out, "world=2"));
  auto wrong =
      startOnEtcd(etcd, dir, "2", etcdWorker(1), conf, {{"ACCEL_ETCD_USER", "root"}, {"ACCEL_ETCD_PASSWORD", "nope"}});
  auto rw = wrong->wait(30000);
  INFO(rw.err);
  CHECK(rw.exit_code == 1);
  CHECK(contains(rw.err, "etcd at https://" + etcd.endpoint()));
  CHECK(contains(rw.err, "authentication failed"));
  // Without the authority that signed the server's certificate, the handshake names it.
  auto unsigned_ = startOnEtcd(etcd, dir, "2", etcdWorker(1), {"--rdzv_conf", "protocol=https,join_timeout=3"}, user);
  auto ru = unsigned_->wait(30000);
  INFO(ru.err);
  CHECK(ru.exit_code == 2);
  CHECK(contains(ru.err,
                 "etcd at https://" + etcd.endpoint() + ": the server's certificate did not verify for 127.0.0.1"));
}

TEST_CASE(
    "etcd: an endpoint that is not etcd is a usage error, one that does not answer an error within the join "
    "timeout",
    "[launch][machines][etcd][bad-input]") {
  TempDir dir;
  const int http_port = freeLoopbackPort();
  BackgroundProcess web({"python3", "-m", "http.server", "--bind", "127.0.0.1", std::to_string(http_port)});
  REQUIRE(web.waitForOutput("Serving HTTP"));
  auto launch = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", "--nnodes", "2", "--nproc_per_node", "1"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--no_python", "true"});
    return run(argv, {}, hermeticEnv(dir), 30000);
  };
  const auto started = std::chrono::steady_clock::now();
  auto web_answer = launch({"--rdzv_backend", "etcd", "--rdzv_endpoint", "127.0.0.1:" + std::to_string(http_port)});
  CHECK(web_answer.exit_code == 2);
  CHECK(contains(web_answer.err, "http://127.0.0.1:" + std::to_string(http_port) + " is not an etcd server"));
  auto silent = launch({"--rdzv_backend", "etcd-v2", "--rdzv_endpoint",
                        "127.0.0.1:" + std::to_string(freeLoopbackPort()), "--rdzv_conf", "join_timeout=2"});
  CHECK(silent.exit_code == 1);
  CHECK(contains(silent.err, "did not answer within the join timeout"));
  CHECK(secondsSince(started) < 2 + 20);
  auto dry = launch({"--rdzv_backend", "etcd", "--rdzv_endpoint", "10.9.8.7", "--nnodes", "2:3", "--dry_run"});
  CHECK(dry.exit_code == 0);
  CHECK(contains(dry.out, "machine 0: elected in etcd at http://10.9.8.7:2379 (a survivor when it is lost)"));
  auto no_endpoint = launch({"--rdzv_backend", "etcd"});
  CHECK(no_endpoint.exit_code == 2);
  CHECK(contains(no_endpoint.err, "--rdzv_backend etcd needs --rdzv_endpoint HOST:PORT"));
  auto protocol =
      launch({"--rdzv_backend", "etcd", "--rdzv_endpoint", "127.0.0.1:2379", "--rdzv_conf", "protocol=ftp"});
  CHECK(protocol.exit_code == 2);
  CHECK(contains(protocol.err, "--rdzv_conf protocol=ftp: 'ftp' is not http or https"));
  auto half = run({accelBinary(), "launch", "--cpu", "--nnodes", "2", "--nproc_per_node", "1", "--rdzv_backend", "etcd",
                   "--rdzv_endpoint", "127.0.0.1:2379", "--no_python", "true"},
                  {}, hermeticEnv(dir, {{"ACCEL_ETCD_USER", "root"}}), 30000);
  CHECK(half.exit_code == 2);
  CHECK(contains(half.err, "ACCEL_ETCD_USER is set without ACCEL_ETCD_PASSWORD"));
}
