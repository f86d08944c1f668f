// SPDX-License-Identifier: Apache-2.0
#include "runtime/state/accelerator.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "runtime/comm/checked_backend.h"
#include "runtime/comm/cpu_transport.h"
#include "runtime/comm/flight_recorder.h"
#include "runtime/comm/nccl/nccl_backend.h"
#include "runtime/state/cuda_devices.h"
#include "runtime/state/rank_inquiry.h"
#include "runtime/state/uncaught_error.h"
#include "runtime/store/hash_store.h"
#include "runtime/store/prefix_store.h"
#include "runtime/store/tcp_store.h"

namespace accel {

namespace {

// `made`, checked before each collective under DETAIL; the check's own CPU group lives under
// "check" in the group's store namespace.
std::unique_ptr<Backend> checkedWhenDetail(std::unique_ptr<Backend> made, Store& store, int rank, int size,
                                           CpuTransportOptions cpu, bool detail) {
  if (size == 1 || !detail) return made;
  PrefixStore check("check", store);
  cpu.log = nullptr;
  FlightUnrecorded unrecorded;  // the check's calls are not the user's
  return std::make_unique<CheckedBackend>(std::move(made), makeCpuBackend(check, rank, size, cpu));
}

GlooOptions glooOptions(const DistributedEnv& env, const RuntimeSettings& settings, std::chrono::milliseconds timeout) {
  GlooOptions o;
  o.timeout = timeout;
  if (!settings.gloo_iface.empty()) {
    o.iface = settings.gloo_iface;
  } else if (!net::isLoopback(env.master_addr)) {
    std::string local = net::localAddressTowards(env.master_addr);
    if (!local.empty()) o.hostname = local;
  }
  return o;
}

// The diagnose function of a group whose rank r is world rank world[r].
Diagnose diagnoseFor(std::shared_ptr<RankInquiry> inquiry, std::vector<int> world) {
  return [inquiry = std::move(inquiry), world = std::move(world)](const FailureClues& clues) {
    FailureClues in_world = clues;
    for (auto* ranks : {&in_world.absent, &in_world.told}) {
      for (int& r : *ranks) {
        if (r >= 0 && static_cast<size_t>(r) < world.size()) r = world[static_cast<size_t>(r)];
      }
    }
    return inquiry->explain(in_world);
  };
}

}  // namespace

Accelerator::Accelerator(AcceleratorOptions options)
    : env_(readDistributedEnv()),
      settings_(readRuntimeSettings()),
      timeout_(options.timeout.value_or(settings_.collective_timeout)) {
  reportUncaughtErrors();
  // Gloo writes to peer sockets without MSG_NOSIGNAL: when a peer dies, SIGPIPE would kill this
  // rank before it can report the failure. Python (hence torch) ignores SIGPIPE at start-up too.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  if (!options.cpu && !env_.use_cpu) {
    int gpus = cudaDeviceCount();
    if (gpus > 0) device_ = {DeviceType::CUDA, env_.local_rank % gpus};
  }
  if (env_.world_size == 1) {
    store_ = std::make_unique<HashStore>();
  } else {
    TCPStoreOptions so;
    so.is_server = env_.rank == 0;
    so.rank = env_.rank;
    so.world_size = env_.world_size;
    so.token = env_.token;
    so.timeout = timeout_;
    store_ = std::make_unique<TCPStore>(env_.master_addr, env_.master_port, so);
  }
  store_->setTimeout(timeout_);
  inquiry_ = std::make_shared<RankInquiry>(*store_, env_.launcher_socket);
  CpuTransportOptions cpu;
  cpu.gloo = glooOptions(env_, settings_, timeout_);
  cpu.shm = settings_.shm;
  cpu.host_id = settings_.host_id;
  detail_ = settings_.debug == DebugLevel::Detail;
  if (settings_.debug != DebugLevel::Off) {
    cpu.log = [rank = env_.rank](const std::string& line) {
      std::cerr << "accel-runtime: rank " << rank << ": group of " << line << std::endl;
    };
  }
  group_ = std::make_unique<ProcessGroup>(
      *store_, "accel/world", env_.rank, env_.world_size,
      [cpu, detail = detail_, inquiry = inquiry_](Store& s, int r, int n, const std::vector<int>& world) {
        CpuTransportOptions o = cpu;
        o.gloo.diagnose = diagnoseFor(inquiry, world);
        return checkedWhenDetail(makeCpuBackend(s, r, n, o), s, r, n, cpu, detail);
      });
  if (detail_ && env_.rank == 0 && env_.world_size > 1) {
    std::cerr
        << "accel-runtime: rank 0: debug mode (ACCEL_DEBUG=DETAIL or --debug): every collective is checked against "
           "the other ranks' before it runs"
        << std::endl;
  }
  cpu_ = cpu;
  rng_.seed(0);
}

ProcessGroup& Accelerator::deviceProcessGroup() {
  if (device_.type == DeviceType::CPU) return *group_;
  if (!device_group_) {  // a CUDA device exists only in a build with NCCL (cuda_devices_none.cc)
    NcclOptions nccl;
    nccl.timeout = timeout_;
    const int device = device_.index;
    device_group_ = std::make_unique<ProcessGroup>(
        *store_, "accel/device", env_.rank, env_.world_size,
        [nccl, device, cpu = cpu_, detail = detail_, inquiry = inquiry_](Store& s, int r, int n,
                                                                         const std::vector<int>& world) {
          NcclOptions o = nccl;
          o.diagnose = diagnoseFor(inquiry, world);
          return checkedWhenDetail(std::make_unique<NcclBackend>(s, r, n, device, o), s, r, n, cpu, detail);
        });
  }
  return *device_group_;
}

Accelerator::~Accelerator() {
  try {
    waitForEveryone();
  } catch (const std::exception& e) {
    std::cerr << "accel-runtime: rank " << env_.rank << ": final barrier failed: " << e.what() << "\n";
  }
  device_group_.reset();
  group_.reset();
  store_.reset();
}

void Accelerator::waitForEveryone() { group_->backend().barrier()->wait(); }

void Accelerator::print(const std::string& line) const {
  if (isMainProcess()) std::cout << line << std::endl;
}

std::vector<size_t> Accelerator::lengths(size_t mine) {
  std::vector<int64_t> all(static_cast<size_t>(numProcesses()));
  int64_t n = static_cast<int64_t>(mine);
  group_->backend().allGather(cpuTensor(&n, 1), cpuTensor(all.data(), all.size()))->wait();
  return std::vector<size_t>(all.begin(), all.end());
}

std::vector<uint8_t> Accelerator::rngState() const {
  std::ostringstream out;
  out << rng_;  // the standard's textual form: portable across builds
  const std::string text = out.str();
  return {text.begin(), text.end()};
}

void Accelerator::loadRngState(const std::vector<uint8_t>& state) {
  std::istringstream in(std::string(state.begin(), state.end()));
  std::mt19937_64 restored;
  in >> restored;
  if (!in) {
    throw Error(fmt::format("the RNG state ({} bytes) is not a std::mt19937_64 state", state.size()),
                "was the checkpoint written by another program?");
  }
  rng_ = restored;
}

uint64_t Accelerator::setSeed(uint64_t seed, bool per_process) {
  uint64_t used = per_process ? seed + static_cast<uint64_t>(env_.rank) : seed;
  rng_.seed(used);
  std::srand(static_cast<unsigned>(used));
  return used;
}

}  // namespace accel
