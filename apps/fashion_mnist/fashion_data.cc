// SPDX-License-Identifier: Apache-2.0
#include "apps/fashion_mnist/fashion_data.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <torch/data/datasets/mnist.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/user_dirs.h"

namespace accel::fashion {

namespace fs = std::filesystem;

namespace {

// The four files under the names libtorch's MNIST reader opens, and their exact uncompressed
// sizes: the reader accepts only 60000 training and 10000 test samples of 28x28 pixels, so any
// other size is a damaged file.
struct IdxFile {
  const char* name;
  uintmax_t bytes;
};
constexpr IdxFile kIdxFiles[] = {
    {"train-images-idx3-ubyte", 16 + 60000 * 28 * 28},
    {"train-labels-idx1-ubyte", 8 + 60000},
    {"t10k-images-idx3-ubyte", 16 + 10000 * 28 * 28},
    {"t10k-labels-idx1-ubyte", 8 + 10000},
};

// Decompressing takes seconds, so a temporary directory untouched this long belongs to a run
// that was killed; a younger one may be another process's preparation in progress.
constexpr auto kStaleTemp = std::chrono::minutes(10);

std::string osError(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Why `dir` is not a complete cache ("" when it is).
std::string whyIncomplete(const fs::path& dir) {
  for (const IdxFile& f : kIdxFiles) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(dir / f.name, ec);
    if (ec) return (dir / f.name).string() + ": " + ec.message();
    if (size != f.bytes) return fmt::format("{} has {} bytes, not {}", (dir / f.name).string(), size, f.bytes);
  }
  return "";
}

void checkSources(const fs::path& source_dir) {
  std::vector<std::string> missing;
  for (const IdxFile& f : kIdxFiles) {
    const fs::path gz = source_dir / (std::string(f.name) + ".gz");
    if (!fs::is_regular_file(gz)) missing.push_back(gz.string());
  }
  if (missing.empty()) return;
  std::string message = "missing Fashion-MNIST file " + missing.front();
  if (missing.size() > 1) message += fmt::format(" (and {} more in {})", missing.size() - 1, source_dir.string());
  throw Error(message, "apt-get install dataset-fashion-mnist, or pass the directory holding the four .gz files",
              ExitStatus::Usage);
}

Error corrupt(const std::string& gz, const std::string& why) {
  return Error("corrupt Fashion-MNIST file " + gz + ": " + why,
               "apt-get install --reinstall dataset-fashion-mnist restores Debian's copy");
}

// zlib's message for a failed read, without the path it puts first.
std::string zlibReason(gzFile in, const std::string& gz) {
  int code = Z_OK;
  std::string why = gzerror(in, &code);
  if (startsWith(why, gz + ": ")) why.erase(0, gz.size() + 2);
  return why;
}

void writeAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(osError("cannot write", path));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Inflates `gz` into the new file `out` and fsyncs it; returns the uncompressed size.
// gzread passes a file that is not gzip through unchanged, hence the gzdirect check; a stream
// cut short reads as an early end, which only gzclose reports (Z_BUF_ERROR).
uintmax_t inflateInto(gzFile in, const std::string& gz, int out_fd, const std::string& out) {
  if (gzdirect(in)) throw corrupt(gz, "it is not a gzip file");
  std::vector<char> buffer(1 << 20);
  uintmax_t total = 0;
  for (;;) {
    const int n = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) throw corrupt(gz, zlibReason(in, gz));
    if (n == 0) break;
    writeAll(out_fd, buffer.data(), static_cast<size_t>(n), out);
    total += static_cast<uintmax_t>(n);
  }
  if (::fsync(out_fd) != 0) throw Error(osError("cannot sync", out));
  return total;
}

void decompress(const std::string& gz, const std::string& out, uintmax_t expected) {
  gzFile in = gzopen(gz.c_str(), "rb");
  if (!in) throw Error(osError("cannot open", gz));
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out_fd < 0) {
    gzclose(in);
    throw Error(osError("cannot create", out));
  }
  uintmax_t total = 0;
  try {
    total = inflateInto(in, gz, out_fd, out);
  } catch (...) {
    gzclose(in);
    ::close(out_fd);
    throw;
  }
  const int closed = gzclose(in);
  if (::close(out_fd) != 0) throw Error(osError("cannot write", out));
  if (closed == Z_BUF_ERROR) throw corrupt(gz, "it ends in the middle of its data");
  if (closed != Z_OK) throw Error("cannot read " + gz + " (zlib error " + std::to_string(closed) + ")");
  if (total != expected) {
    throw corrupt(gz,
                  fmt::format("it decompresses to {} bytes, not the {} of that Fashion-MNIST file", total, expected));
  }
}

void syncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error(osError("cannot open", dir.string()));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw Error(osError("cannot sync", dir.string()));
}

// A temporary directory beside the target, removed unless released (a failure leaves nothing).
class TempDirectory {
 public:
  explicit TempDirectory(const fs::path& target) {
    std::string pattern = (target.parent_path() / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw Error(osError("cannot create a directory in", target.parent_path().string()));
    path_ = pattern;
    // mkdtemp's 0700 would make a cache shared between users unreadable; the data is public.
    // Best effort: a private cache still works for its owner.
    std::error_code ec;
    fs::permissions(path_, fs::perms(0755), ec);
  }
  ~TempDirectory() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

// Removes what killed preparations of `target` left beside it.
void removeStaleTemps(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    if (!startsWith(entry.path().filename().string(), prefix)) continue;
    const auto touched = fs::last_write_time(entry.path(), ec);
    if (!ec && now - touched > kStaleTemp) fs::remove_all(entry.path(), ec);
  }
}

Error incompleteCache(const fs::path& target, const std::string& why) {
  return Error("incomplete Fashion-MNIST cache " + target.string() + ": " + why,
               "remove " + target.string() + "; the next run prepares it again");
}

// Renames the filled `temp` to `target`. Losing to another process that renamed a complete
// cache first is fine; anything else there is not ours to replace.
void publish(TempDirectory& temp, const fs::path& target) {
  std::error_code ec;
  fs::rename(temp.path(), target, ec);
  if (!ec) {
    temp.release();
    syncDirectory(target.parent_path());
    return;
  }
  if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists) {
    throw Error("cannot rename " + temp.path().string() + " to " + target.string() + ": " + ec.message());
  }
  if (const std::string why = whyIncomplete(target); !why.empty()) throw incompleteCache(target, why);
}

fs::path normalTarget(const std::string& cache_dir) {
  fs::path target = fs::absolute(cache_dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // a trailing '/'
  return target;
}

}  // namespace

std::string defaultFashionMnistCache() {
  const std::string cache = cacheDirectory();
  if (cache.empty() || cache[0] != '/') {
    throw Error("no home directory for the Fashion-MNIST cache", "set HOME or XDG_CACHE_HOME");
  }
  return cache + "/accel/fashion-mnist";
}

std::string prepareFashionMnist(const std::string& source_dir, const std::string& cache_dir) {
  const fs::path target = normalTarget(cache_dir);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) throw Error("cannot create " + target.parent_path().string() + ": " + ec.message());
  removeStaleTemps(target);
  if (fs::exists(target, ec)) {
    // Ours appear complete or not at all, so anything else there was made by someone else.
    const std::string why = whyIncomplete(target);
    if (why.empty()) return target.string();
    if (!fs::is_empty(target, ec)) throw incompleteCache(target, why);
  }
  checkSources(source_dir);
  TempDirectory temp(target);
  for (const IdxFile& f : kIdxFiles) {
    decompress((fs::path(source_dir) / (std::string(f.name) + ".gz")).string(), (temp.path() / f.name).string(),
               f.bytes);
  }
  syncDirectory(temp.path());
  publish(temp, target);
  return target.string();
}

FashionMnist loadFashionMnist(const std::string& dir, bool train) {
  using torch::data::datasets::MNIST;
  try {
    MNIST reader(dir, train ? MNIST::Mode::kTrain : MNIST::Mode::kTest);
    // The reader's own tensors, normalised in place: no second copy of the split.
    torch::Tensor images = reader.images();
    images.sub_(kFashionMnistMean).div_(kFashionMnistStd);
    return {images, reader.targets()};
  } catch (const c10::Error& e) {
    throw Error("cannot read Fashion-MNIST from " + dir + ": " + e.what_without_backtrace(),
                "prepare the directory with prepareFashionMnist (remove it to have it prepared again)");
  }
}

}  // namespace accel::fashion
