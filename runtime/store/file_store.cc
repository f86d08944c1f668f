// SPDX-License-Identifier: Apache-2.0
// File layout: the 8-byte header "ACCELFS1", then records
//   op u8 (1 set, 2 delete) | key length u32 | value length u32 | key | value  (little-endian).
#include "runtime/store/file_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

namespace {

constexpr char kHeader[] = "ACCELFS1";
constexpr uint64_t kHeaderBytes = sizeof kHeader - 1;
constexpr size_t kRecordHeadBytes = 9;
constexpr uint8_t kOpSet = 1;
constexpr uint8_t kOpDelete = 2;
// The TCPStore's limits, so that code moving between stores meets the same ones.
constexpr uint32_t kMaxKeyBytes = 64u << 10;
constexpr uint32_t kMaxValueBytes = 64u << 20;
// Bookkeeping for deleting the file after the last user (see the constructor's contract).
const std::string kUsersKey = std::string("\0accel/users", 12);
const std::string kFinishedKey = std::string("\0accel/finished", 15);
constexpr auto kFirstPoll = std::chrono::milliseconds(2);
constexpr auto kMaxPoll = std::chrono::milliseconds(10);

uint32_t readU32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void putU32(Bytes& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

// The in-process mutex, then flock(); replays the log on entry so data_ is current.
class FileStore::Lock {
 public:
  explicit Lock(FileStore& store) : store_(store), guard_(store.mutex_) {
    while (::flock(store_.fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        throw store_.ioError("cannot lock the file", "the file system must support flock() across nodes (NFS does)");
      }
    }
    try {
      store_.refresh();
    } catch (...) {
      ::flock(store_.fd_, LOCK_UN);
      throw;
    }
  }
  ~Lock() { ::flock(store_.fd_, LOCK_UN); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  FileStore& store_;
  std::lock_guard<std::mutex> guard_;
};

FileStore::FileStore(std::string path, int world_size) : path_(std::move(path)), world_size_(world_size) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path_).parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir.empty() ? fs::path(".") : dir, ec)) {
    throw Error(fmt::format("file store: directory {} does not exist", dir.string()),
                "create it on a file system every node can reach, or pick another path");
  }
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw ioError("cannot open");
  try {
    Lock lock(*this);
    addLocked(kUsersKey, 1);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

FileStore::~FileStore() {
  try {
    Lock lock(*this);
    int64_t users = addLocked(kUsersKey, -1);
    int64_t finished = addLocked(kFinishedKey, 1);
    if (world_size_ > 0 && users == 0 && finished >= world_size_) ::unlink(path_.c_str());
  } catch (const std::exception&) {
    // A destructor cannot report; the cost is a store file left behind.
  }
  ::close(fd_);
}

// Under the lock. Nobody is mid-write then, so an incomplete last record is a crashed writer's
// leftover: it is cut off, so that the next record starts on a record boundary.
void FileStore::refresh() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw ioError("cannot stat");
  auto size = static_cast<uint64_t>(st.st_size);
  if (offset_ == 0) size = checkHeader(size);
  if (size < offset_) {
    throw Error(fmt::format("file store {}: the file shrank under this store", path_),
                "another job may be using the same file: give each run its own path");
  }
  if (size == offset_) return;
  Bytes log(size - offset_);
  for (size_t done = 0; done < log.size();) {
    const auto at = static_cast<off_t>(offset_ + done);
    ssize_t n = ::pread(fd_, log.data() + done, log.size() - done, at);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // shorter than fstat() said: the file changed without the lock
    if (n <= 0) throw ioError("cannot read");
    done += static_cast<size_t>(n);
  }
  offset_ += replay(log);
  if (offset_ < size && ::ftruncate(fd_, static_cast<off_t>(offset_)) != 0) {
    throw ioError("cannot cut off a torn record");
  }
}

// Checks (or, in a new file, writes) the header; returns the file size after that.
uint64_t FileStore::checkHeader(uint64_t size) {
  char head[kHeaderBytes] = {};
  auto n = ::pread(fd_, head, std::min(size, kHeaderBytes), 0);
  if (n < 0 || std::memcmp(head, kHeader, static_cast<size_t>(n)) != 0) {
    throw Error(fmt::format("file store {}: this file is not a store file", path_), "delete it or pick another path");
  }
  if (static_cast<uint64_t>(n) < kHeaderBytes &&
      ::pwrite(fd_, kHeader, kHeaderBytes, 0) != static_cast<ssize_t>(kHeaderBytes)) {
    throw ioError("cannot write");
  }
  offset_ = kHeaderBytes;
  return std::max(size, kHeaderBytes);
}

// Applies the complete records of `log` to data_; returns how many bytes they span.
uint64_t FileStore::replay(const Bytes& log) {
  size_t pos = 0;
  while (log.size() - pos >= kRecordHeadBytes) {
    const uint8_t op = log[pos];
    const uint32_t key_len = readU32(&log[pos + 1]);
    const uint32_t value_len = readU32(&log[pos + 5]);
    if ((op != kOpSet && op != kOpDelete) || key_len > kMaxKeyBytes || value_len > kMaxValueBytes) {
      throw Error(fmt::format("file store {}: corrupt record at byte {}", path_, offset_ + pos),
                  "another program wrote to this file: delete it or pick another path");
    }
    const size_t end = pos + kRecordHeadBytes + key_len + value_len;
    if (end > log.size()) break;
    const uint8_t* key_at = log.data() + pos + kRecordHeadBytes;
    std::string key(reinterpret_cast<const char*>(key_at), key_len);
    if (op == kOpSet) {
      data_[key] = Bytes(key_at + key_len, key_at + key_len + value_len);
    } else {
      data_.erase(key);
    }
    pos = end;
  }
  return pos;
}

// Under the lock, after refresh(): offset_ is the end of the file.
void FileStore::append(uint8_t op, const std::string& key, const Bytes& value) {
  if (key.size() > kMaxKeyBytes || value.size() > kMaxValueBytes) {
    throw Error(
        fmt::format("file store {}: key {} or its value is over the limit ({} bytes "
                    "for keys, {} MiB for values)",
                    path_, key, kMaxKeyBytes, kMaxValueBytes >> 20));
  }
  Bytes record{op};
  putU32(record, static_cast<uint32_t>(key.size()));
  putU32(record, static_cast<uint32_t>(value.size()));
  record.insert(record.end(), key.begin(), key.end());
  record.insert(record.end(), value.begin(), value.end());
  for (size_t done = 0; done < record.size();) {
    const auto at = static_cast<off_t>(offset_ + done);
    ssize_t n = ::pwrite(fd_, record.data() + done, record.size() - done, at);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) throw ioError("cannot write");
    done += static_cast<size_t>(n);
  }
  offset_ += record.size();
  if (op == kOpSet) {
    data_[key] = value;
  } else {
    data_.erase(key);
  }
}

Error FileStore::ioError(const std::string& what, std::string hint) const {
  return Error(fmt::format("file store {}: {}: {}", path_, what, toLower(std::strerror(errno))), std::move(hint));
}

int64_t FileStore::addLocked(const std::string& key, int64_t delta) {
  auto it = data_.find(key);
  int64_t value = addedCounter(it == data_.end() ? nullptr : &it->second, delta);
  append(kOpSet, key, toBytes(std::to_string(value)));
  return value;
}

std::vector<std::string> FileStore::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (!data_.count(k)) out.push_back(k);
  }
  return out;
}

template <typename Found>
auto FileStore::pollFor(const std::vector<std::string>& keys, std::chrono::milliseconds timeout, Found found) {
  const auto deadline = std::chrono::steady_clock::now() + std::min(timeout, kLongestWait);
  auto pause = std::chrono::duration_cast<std::chrono::steady_clock::duration>(kFirstPoll);
  while (true) {
    std::vector<std::string> absent;
    {
      Lock lock(*this);
      absent = missing(keys);
      if (absent.empty()) return found();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      throw StoreTimeout(fmt::format("file store {}: timed out after {} ms waiting for key(s) {}", path_,
                                     timeout.count(), join(absent, ", ")));
    }
    std::this_thread::sleep_for(std::min(pause, deadline - now));
    pause = std::min<std::chrono::steady_clock::duration>(pause * 2, kMaxPoll);
  }
}

void FileStore::set(const std::string& key, const Bytes& value) {
  Lock lock(*this);
  append(kOpSet, key, value);
}

Bytes FileStore::get(const std::string& key) {
  return pollFor({key}, timeout(), [&] { return data_.at(key); });
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  Lock lock(*this);
  return addLocked(key, delta);
}

bool FileStore::check(const std::vector<std::string>& keys) {
  Lock lock(*this);
  return missing(keys).empty();
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  pollFor(keys, timeout, [] {});
}

bool FileStore::deleteKey(const std::string& key) {
  Lock lock(*this);
  if (!data_.count(key)) return false;
  append(kOpDelete, key, {});
  return true;
}

int64_t FileStore::numKeys() {
  Lock lock(*this);
  return static_cast<int64_t>(data_.size() - data_.count(kUsersKey) - data_.count(kFinishedKey));
}

Bytes FileStore::compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Lock lock(*this);
  auto it = data_.find(key);
  if (compareSetMatches(it == data_.end() ? nullptr : &it->second, expected)) {
    append(kOpSet, key, desired);
    return desired;
  }
  return it == data_.end() ? Bytes{} : it->second;
}

}  // namespace accel
