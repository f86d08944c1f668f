// SPDX-License-Identifier: Apache-2.0
#include "lib/common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lib/common/error.h"

namespace accel {

namespace {

std::string osError(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

void writeAll(int fd, const std::string& content, const std::string& tmp) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(osError("cannot write", tmp));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void writeFileAtomic(const std::string& path, const std::string& content, bool create_parents) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (create_parents) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw Error("cannot create directory " + dir.string() + ": " + ec.message());
  }
  if (!fs::is_directory(dir)) {
    throw Error("cannot write " + path + ": directory " + dir.string() + " does not exist",
                "create the directory first, or choose another path");
  }
  std::string tmp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error(osError("cannot create a temporary file in", dir.string()));
  try {
    struct stat existing {};
    mode_t mode = 0644;
    if (::stat(path.c_str(), &existing) == 0) {
      mode = existing.st_mode & 07777;
    } else {
      mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    if (::fchmod(fd, mode) != 0) throw Error(osError("cannot set permissions of", tmp));
    writeAll(fd, content, tmp);
    if (::fsync(fd) != 0) throw Error(osError("cannot flush", tmp));
    if (::close(fd) != 0) {
      fd = -1;
      throw Error(osError("cannot close", tmp));
    }
    fd = -1;
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw Error(osError("cannot replace", path));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(osError("cannot read", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool fileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace accel
