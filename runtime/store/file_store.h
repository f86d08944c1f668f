// SPDX-License-Identifier: Apache-2.0
// FileStore: ranks meet through one file on a shared file system (no server, no port). The file
// is an append-only log of set/delete records guarded by flock(); every call first replays what
// others appended since its last look. Blocking calls poll the file. Thread- and process-safe.
#pragma once

#include <map>
#include <mutex>

#include "runtime/store/store.h"

namespace accel {

class FileStore : public Store {
 public:
  // Opens the store file at `path`, creating it when missing; its directory must exist (Error
  // naming it otherwise). With world_size > 0 the last of world_size FileStores on this file to
  // be destroyed (none left open) deletes it, so that the next run starts empty, as in c10d.
  explicit FileStore(std::string path, int world_size = -1);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;  // polls every 2-10 ms
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  using Store::wait;
  bool deleteKey(const std::string& key) override;
  int64_t numKeys() override;  // user keys only: the file's own bookkeeping keys are not counted
  Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override;

 private:
  class Lock;
  void refresh();
  uint64_t checkHeader(uint64_t size);
  uint64_t replay(const Bytes& log);
  void append(uint8_t op, const std::string& key, const Bytes& value);
  int64_t addLocked(const std::string& key, int64_t delta);
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;
  template <typename Found>
  auto pollFor(const std::vector<std::string>& keys, std::chrono::milliseconds timeout, Found found);
  Error ioError(const std::string& what, std::string hint = {}) const;  // from errno

  std::string path_;
  int world_size_;
  int fd_ = -1;
  std::mutex mutex_;     // flock() does not exclude threads that share fd_
  uint64_t offset_ = 0;  // bytes of the file replayed into data_
  std::map<std::string, Bytes> data_;
};

}  // namespace accel
