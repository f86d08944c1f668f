// SPDX-License-Identifier: Apache-2.0
// The Fashion-MNIST example's data: the cache is prepared once, completely or not at all (a
// killed run's leftovers, processes racing, corrupt or missing sources), and the loader returns
// both splits with the shapes, types and normalisation the header promises. Cases that need
// Debian's dataset-fashion-mnist say so and skip where it is not installed.
// libtorch first: Debian's is built with glog, whose CHECK would replace Catch's.
#include "apps/fashion_mnist/fashion_data.h"
#undef CHECK

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "lib/common/error.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"

using namespace accel::fashion;
using accel::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::vector<std::pair<std::string, uintmax_t>> kExpected = {{"train-images-idx3-ubyte", 47040016},
                                                                  {"train-labels-idx1-ubyte", 60008},
                                                                  {"t10k-images-idx3-ubyte", 7840016},
                                                                  {"t10k-labels-idx1-ubyte", 10008}};

bool haveSources() {
  if (fs::exists(fs::path(kFashionMnistSourceDir) / "train-images-idx3-ubyte.gz")) return true;
  accel::test::skip(std::string("Debian's dataset-fashion-mnist is not installed (") + kFashionMnistSourceDir + ")");
  return false;
}

bool complete(const std::string& dir) {
  for (const auto& [name, bytes] : kExpected) {
    std::error_code ec;
    if (fs::file_size(fs::path(dir) / name, ec) != bytes || ec) return false;
  }
  return true;
}

// Names beside `target` that look like a preparation's temporary directory.
std::vector<std::string> temps(const fs::path& target) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(target.parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("." + target.filename().string() + ".tmp-", 0) == 0) found.push_back(name);
  }
  return found;
}

// A source directory whose train-images file holds `bytes` and whose others are the real ones.
std::string sourcesWithImages(const TempDir& dir, const std::string& bytes) {
  const fs::path src = fs::path(dir.path()) / "src";
  fs::create_directories(src);
  for (const auto& [name, size] : kExpected) {
    if (name == "train-images-idx3-ubyte") continue;
    fs::create_symlink(fs::path(kFashionMnistSourceDir) / (name + ".gz"), src / (name + ".gz"));
  }
  std::ofstream(src / "train-images-idx3-ubyte.gz", std::ios::binary) << bytes;
  return src.string();
}

std::string head(const std::string& path, size_t bytes) {
  std::string text(bytes, '\0');
  std::ifstream(path, std::ios::binary).read(text.data(), static_cast<std::streamsize>(bytes));
  return text;
}

}  // namespace

TEST_CASE("fashion-mnist: prepare writes the four files, and both splits load", "[torch][data]") {
  if (!haveSources()) return;
  TempDir dir;
  const std::string cache = prepareFashionMnist(kFashionMnistSourceDir, dir.file("cache"));
  CHECK(cache == dir.file("cache"));
  CHECK(complete(cache));
  CHECK(temps(cache).empty());

  const FashionMnist train = loadFashionMnist(cache, true);
  CHECK(train.images.sizes() == torch::IntArrayRef{60000, 1, 28, 28});
  CHECK(train.images.scalar_type() == torch::kFloat32);
  CHECK(train.labels.sizes() == torch::IntArrayRef{60000});
  CHECK(train.labels.scalar_type() == torch::kInt64);
  CHECK(train.labels.min().item<int64_t>() == 0);
  CHECK(train.labels.max().item<int64_t>() == 9);
  // Normalised with the training set's own statistics: mean 0 and deviation 1, up to rounding.
  CHECK(std::abs(train.images.mean().item<double>()) < 0.01);
  CHECK(std::abs(train.images.std().item<double>() - 1.0) < 0.01);

  const FashionMnist test = loadFashionMnist(cache, false);
  CHECK(test.size() == 10000);
  CHECK(test.images.sizes() == torch::IntArrayRef{10000, 1, 28, 28});
  CHECK(kFashionMnistClasses[9] == "Ankle boot");
}

TEST_CASE("fashion-mnist: a complete cache is reused without reading the sources", "[torch][data]") {
  if (!haveSources()) return;
  TempDir dir;
  const std::string cache = prepareFashionMnist(kFashionMnistSourceDir, dir.file("cache"));
  const auto dir_time = fs::last_write_time(cache);
  const auto file_time = fs::last_write_time(fs::path(cache) / "train-images-idx3-ubyte");
  // Sources that do not exist: only a reuse can succeed.
  CHECK(prepareFashionMnist(dir.file("no-such-source"), cache + "/") == cache);
  CHECK(fs::last_write_time(cache) == dir_time);
  CHECK(fs::last_write_time(fs::path(cache) / "train-images-idx3-ubyte") == file_time);
}

TEST_CASE("fashion-mnist: missing sources are a usage error naming the file and the package", "[torch][data]") {
  TempDir dir;
  try {
    prepareFashionMnist(dir.file("nowhere"), dir.file("cache"));
    FAIL("prepareFashionMnist accepted a missing source directory");
  } catch (const accel::Error& e) {
    CHECK(e.status() == accel::ExitStatus::Usage);
    CHECK_THAT(e.what(), Catch::Contains(dir.file("nowhere/train-images-idx3-ubyte.gz")));
    CHECK_THAT(e.what(), Catch::Contains("and 3 more"));
    CHECK_THAT(e.hint(), Catch::Contains("apt-get install dataset-fashion-mnist"));
  }
  CHECK_FALSE(fs::exists(dir.file("cache")));
}

TEST_CASE("fashion-mnist: a killed run's leftover is removed, another's in progress is kept", "[torch][data]") {
  if (!haveSources()) return;
  TempDir dir;
  const fs::path cache = dir.file("cache");
  dir.write(".cache.tmp-killed/train-images-idx3-ubyte", "partial");
  fs::last_write_time(dir.file(".cache.tmp-killed"), fs::file_time_type::clock::now() - std::chrono::hours(1));
  dir.write(".cache.tmp-active/train-images-idx3-ubyte", "being written");

  CHECK(prepareFashionMnist(kFashionMnistSourceDir, cache.string()) == cache.string());
  CHECK(complete(cache.string()));
  CHECK(temps(cache) == std::vector<std::string>{".cache.tmp-active"});
}

TEST_CASE("fashion-mnist: processes preparing at once all get the one complete cache", "[torch][data]") {
  if (!haveSources()) return;
  TempDir dir;
  std::vector<std::string> results(3), errors(3);
  std::vector<std::thread> ranks;
  for (size_t r = 0; r < results.size(); ++r) {
    ranks.emplace_back([&, r] {
      try {
        results[r] = prepareFashionMnist(kFashionMnistSourceDir, dir.file("cache"));
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : ranks) t.join();
  CHECK(errors == std::vector<std::string>(3));
  CHECK(results == std::vector<std::string>(3, dir.file("cache")));
  CHECK(complete(dir.file("cache")));
  CHECK(temps(dir.file("cache")).empty());
}

TEST_CASE("fashion-mnist: a corrupt source names the file and leaves no cache", "[torch][data]") {
  if (!haveSources()) return;
  const std::string real = std::string(kFashionMnistSourceDir) + "/train-images-idx3-ubyte.gz";
  const std::pair<std::string, std::string> cases[] = {
      {"not gzip", std::string(4096, 'x')},
      {"truncated", head(real, 100000)},
      {"another file's data", accel::test::slurp(std::string(kFashionMnistSourceDir) + "/t10k-images-idx3-ubyte.gz")},
  };
  for (const auto& [what, bytes] : cases) {
    SECTION(what) {
      TempDir dir;
      const std::string src = sourcesWithImages(dir, bytes);
      CHECK_THROWS_WITH(prepareFashionMnist(src, dir.file("cache")),
                        Catch::Contains(src + "/train-images-idx3-ubyte.gz"));
      CHECK_FALSE(fs::exists(dir.file("cache")));
      CHECK(temps(dir.file("cache")).empty());
    }
  }
}

TEST_CASE("fashion-mnist: an incomplete cache made elsewhere is refused, not replaced", "[torch][data]") {
  if (!haveSources()) return;
  TempDir dir;
  dir.write("cache/train-images-idx3-ubyte", "someone else's");
  try {
    prepareFashionMnist(kFashionMnistSourceDir, dir.file("cache"));
    FAIL("prepareFashionMnist replaced an incomplete cache");
  } catch (const accel::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("incomplete Fashion-MNIST cache " + dir.file("cache")));
    CHECK_THAT(e.hint(), Catch::Contains("remove " + dir.file("cache")));
  }
  CHECK(accel::test::slurp(dir.file("cache/train-images-idx3-ubyte")) == "someone else's");
  CHECK(temps(dir.file("cache")).empty());
}

TEST_CASE("fashion-mnist: the loader names a directory it cannot read", "[torch][data]") {
  TempDir dir;
  CHECK_THROWS_WITH(loadFashionMnist(dir.path(), false),
                    Catch::Contains("cannot read Fashion-MNIST from " + dir.path()));
}
