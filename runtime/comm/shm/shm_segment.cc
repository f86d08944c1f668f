// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/shm/shm_segment.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "lib/common/random_bytes.h"
#include "runtime/comm/shm/shm_messages.h"

namespace accel::comm::shm {

namespace {

constexpr uint64_t kMagic = 0x6d68732d6c656361;  // "accel-shm"

struct Header {
  uint64_t magic;
  uint64_t nonce;  // proves that /proc/PID/fd/FD is the segment the creator meant
  uint32_t members;
  uint64_t slot_bytes;
};

static_assert(sizeof(Header) <= 64 && sizeof(ShmMember) == 64, "the layout gives each one cache line");

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

std::string errnoText(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// The creator's side: a memfd of `bytes`, its header written. Returns the fd, or -1 and `why`.
int createMemfd(size_t bytes, std::string& why) {
  int fd = static_cast<int>(::syscall(SYS_memfd_create, "accel-shm", MFD_CLOEXEC));
  if (fd < 0) {
    why = errnoText("memfd_create");
    return -1;
  }
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    why = errnoText("ftruncate of the shared-memory segment");  // e.g. a small /dev/shm limit
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

ShmSegment::ShmSegment(int members, size_t slot_bytes)
    : members_(members),
      slot_bytes_(slot_bytes),
      data_offset_(roundUp(64 + 64 * static_cast<size_t>(members), 4096)),
      pidfds_(new int[static_cast<size_t>(members)]) {
  total_bytes_ = data_offset_ + (2 * static_cast<size_t>(members) + 2) * slot_bytes_;
  for (int m = 0; m < members; ++m) pidfds_[static_cast<size_t>(m)] = -1;
}

ShmSegment::~ShmSegment() {
  for (int m = 0; m < members_; ++m) {
    if (pidfds_[static_cast<size_t>(m)] >= 0) ::close(pidfds_[static_cast<size_t>(m)]);
  }
  if (base_) ::munmap(base_, total_bytes_);
}

void ShmSegment::map(int fd) {
  // MAP_POPULATE: the first collective should not pay the page faults.
  void* p = ::mmap(nullptr, total_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) throw std::runtime_error(errnoText("mmap of the shared-memory segment"));
  base_ = static_cast<uint8_t*>(p);
}

// The first member: creates the segment, tells the others where it is, keeps it open until each
// has mapped it or given up, then announces the group's answer. Returns this member's problem.
std::string ShmSegment::create(Store& store) {
  std::string problem;
  struct Closing {  // also when the store times out: the fd must not outlive this call
    int fd;
    ~Closing() {
      if (fd >= 0) ::close(fd);
    }
  } memfd{createMemfd(total_bytes_, problem)};
  const uint64_t nonce = randomU64();
  if (memfd.fd >= 0) {
    try {
      map(memfd.fd);
      *reinterpret_cast<Header*>(base_) = Header{kMagic, nonce, static_cast<uint32_t>(members_), slot_bytes_};
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  const SegmentOffer offer{problem.empty(), static_cast<int>(::getpid()), memfd.fd, nonce, problem};
  store.set("segment", toBytes(offer.encode()));
  std::vector<std::string> keys;
  for (int m = 1; m < members_; ++m) keys.push_back(fmt::format("mapped/{}", m));
  store.wait(keys);
  for (int m = 1; m < members_ && problem.empty(); ++m) {
    const auto answer = SegmentAnswer::decode(toString(store.get(keys[static_cast<size_t>(m - 1)])));
    if (!answer.ok) problem = fmt::format("member {}: {}", m, answer.problem);
  }
  store.set("decision", toBytes(SegmentAnswer{problem.empty(), problem}.encode()));
  return problem;
}

// Another member: maps the creator's segment through /proc and reports how it went; returns the
// creator's answer for the whole group ("" when every member has it).
std::string ShmSegment::attach(Store& store, int member) {
  std::string problem;
  const SegmentOffer offer = SegmentOffer::decode(toString(store.get("segment")));
  if (!offer.created) {
    problem = "the first member could not create it";
  } else {
    const std::string path = fmt::format("/proc/{}/fd/{}", offer.pid, offer.fd);
    const int mine = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (mine < 0) {
      problem = errnoText(("open " + path).c_str());
    } else {
      try {
        map(mine);
        auto* h = reinterpret_cast<const Header*>(base_);
        if (h->magic != kMagic || h->nonce != offer.nonce)
          problem = path + " is not this group's segment (another PID namespace?)";
      } catch (const std::exception& e) {
        problem = e.what();
      }
      ::close(mine);
    }
  }
  store.set(fmt::format("mapped/{}", member), toBytes(SegmentAnswer{problem.empty(), problem}.encode()));
  const auto decision = SegmentAnswer::decode(toString(store.get("decision")));
  return decision.ok ? "" : decision.problem;
}

std::unique_ptr<ShmSegment> ShmSegment::open(Store& store, int member, int members, size_t slot_bytes,
                                             std::string& why_not) {
  std::unique_ptr<ShmSegment> seg(new ShmSegment(members, slot_bytes));
  const std::string problem = member == 0 ? seg->create(store) : seg->attach(store, member);
  if (!problem.empty()) {
    why_not = problem;
    return nullptr;
  }
  seg->member(member).pid.store(static_cast<int32_t>(::getpid()));
  store.set(fmt::format("pid/{}", member), toBytes("set"));
  std::vector<std::string> pids;
  for (int m = 0; m < members; ++m) pids.push_back(fmt::format("pid/{}", m));
  store.wait(pids);
  seg->watchPeers();
  return seg;
}

void ShmSegment::watchPeers() {
  for (int m = 0; m < members_; ++m) {
    const int pid = member(m).pid.load();
    if (pid == ::getpid()) continue;
    pidfds_[static_cast<size_t>(m)] = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  }
}

ShmMember& ShmSegment::member(int m) const {
  return *reinterpret_cast<ShmMember*>(base_ + 64 + 64 * static_cast<size_t>(m));
}

uint8_t* ShmSegment::slots(int parity) {
  return base_ + data_offset_ + static_cast<size_t>(parity) * static_cast<size_t>(members_) * slot_bytes_;
}

uint8_t* ShmSegment::result(int parity) {
  return base_ + data_offset_ + 2 * static_cast<size_t>(members_) * slot_bytes_ +
         static_cast<size_t>(parity) * slot_bytes_;
}

bool ShmSegment::exited(int m) const {
  const int fd = pidfds_[static_cast<size_t>(m)];
  if (fd >= 0) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  const int pid = member(m).pid.load();
  return pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace accel::comm::shm
