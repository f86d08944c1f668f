// SPDX-License-Identifier: Apache-2.0
// The Fashion-MNIST example's data: Debian's gzip-compressed IDX files (package
// dataset-fashion-mnist) decompressed once into a cache directory, then read with libtorch's own
// MNIST reader (the two data sets share the IDX format, file names and sizes).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <torch/types.h>

namespace accel::fashion {

// Where Debian's dataset-fashion-mnist installs the four .gz files.
inline constexpr const char* kFashionMnistSourceDir = "/usr/share/datasets/fashion-mnist";

// The usual per-pixel mean and standard deviation of the training images (pixels in [0, 1]).
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

// The 10 labels' names, indexed by label.
inline constexpr std::array<std::string_view, 10> kFashionMnistClasses = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

// $XDG_CACHE_HOME/accel/fashion-mnist (an absolute XDG_CACHE_HOME only, as the XDG spec says),
// else ~/.cache/accel/fashion-mnist. Throws Error when neither HOME nor the password database
// names a home directory.
std::string defaultFashionMnistCache();

// Makes `cache_dir` hold the four uncompressed IDX files under the names libtorch's MNIST reader
// opens (train-images-idx3-ubyte, ...) and returns it as an absolute, normalised path without a
// trailing '/': the directory loadFashionMnist takes. A complete cache is returned without
// touching `source_dir` (the four *.gz files). Otherwise the files are decompressed and fsynced
// in a fresh temporary directory beside `cache_dir`, which is then renamed into place, so no
// reader ever sees a partial cache: not after a kill, and not while other processes prepare it
// at the same time (whoever loses the rename uses the winner's directory). Temporary directories
// that killed runs left (untouched for a while) are removed.
// Throws Error (exit status Usage) naming a missing source file, with the apt-get hint; Error
// naming the file for a corrupt or truncated .gz or one of the wrong size; Error naming
// `cache_dir` when it exists but is incomplete (the caller's to remove: it was not made here).
std::string prepareFashionMnist(const std::string& source_dir, const std::string& cache_dir);

// One split: images float32 [N, 1, 28, 28] normalised to (pixel/255 - kFashionMnistMean) /
// kFashionMnistStd, labels int64 [N] in 0..9. N is 60000 (train) or 10000 (test).
struct FashionMnist {
  torch::Tensor images;
  torch::Tensor labels;
  int64_t size() const { return labels.size(0); }
};

// Reads a split from a directory prepareFashionMnist returned. Throws Error naming `dir` when
// libtorch's reader refuses a file (missing, or not an IDX file of the expected size).
FashionMnist loadFashionMnist(const std::string& dir, bool train);

}  // namespace accel::fashion
