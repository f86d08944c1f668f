// SPDX-License-Identifier: Apache-2.0
#include "lib/config/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& message, const std::string& hint) {
  throw ConfigError({{path, message, hint}});
}

std::string megabytes(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

std::string tooLarge(const std::string& size) {
  return fmt::format("the file is {}; accel reads config files up to {} (real ones are a few KB)", size,
                     megabytes(static_cast<double>(kMaxConfigBytes)));
}

const char* kWrongFile = "is this the config file? `accel config` writes one, `accel config show` says which is used";

}  // namespace

std::string readConfigText(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      refuse(path, "config file does not exist",
             "check the path, or create one with `accel config` or `accel config default --config_file " + path + "`");
    }
    refuse(path, "cannot read the config file: " + toLower(std::strerror(errno)), "check its permissions");
  }
  if (S_ISDIR(st.st_mode)) {
    refuse(path, "is a directory, not a config file", "name the file itself, e.g. " + path + "/default_config.yaml");
  }
  if (S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) > kMaxConfigBytes) {
    refuse(path, tooLarge(megabytes(static_cast<double>(st.st_size))), kWrongFile);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) refuse(path, "cannot read the config file: " + toLower(std::strerror(errno)), "check its permissions");
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      refuse(path, "cannot read the config file: " + toLower(std::strerror(error)), "check the file");
    }
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxConfigBytes) {
      ::close(fd);
      refuse(path, tooLarge("more than " + megabytes(static_cast<double>(kMaxConfigBytes))), kWrongFile);
    }
  }
  ::close(fd);
  return text;
}

}  // namespace accel
