#!/usr/bin/env bash
# Builds the libtorch component and its test workers alone (this folder's CMakeLists.txt) against
# an installed accel and the libtorch of a Python's torch: scripts/torch2_smoke (the peers' torch 2
# wheel, on a CPU machine) and scripts/test-gpu's torch check (the GPU image's own torch).
# What Torch's CMake package does not do by itself for a wheel:
# - TORCH_CUDA_ARCH_LIST (a CUDA build): otherwise it compiles and runs a program asking the GPUs
#   for their architectures, in the project's C++ standard, which CMake cannot ask nvcc for; the
#   first GPU's, or any one where there is none (the component compiles no CUDA code);
# - c10_LIBRARY: its search finds Debian's libc10 (libtorch-dev) in the system folders first;
# - -rpath-link: libtorch_cuda needs the wheel's NCCL and CUDA libraries (found at run time
#   through its own rpath), not the older ones of /usr/local/cuda that the linker meets first;
# - the runtime's Gloo first: libtorch_cpu exports the symbols of the Gloo built into it, which
#   would otherwise bind accel_runtime's calls into that Gloo (another version, other layouts).
# Usage: build.sh PYTHON ACCEL_PREFIX BUILD_DIR [TARGET...]  (default: accel_torch checks_worker parity_worker zero_worker)
# Exit: 0 built (the last line says what, against which torch, in how long); 77 this torch
# cannot be built against here (a line "skipped: <reason>"); 1 configure or build failed.
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
py=$1 prefix=$(cd "$2" && pwd) build=$3
shift 3
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(accel_torch checks_worker parity_worker zero_worker)
here=$(cd "$(dirname "$0")" && pwd)
start=$SECONDS
skip() {
  echo "skipped: $*"
  exit 77
}

torch_cmake=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null) ||
  skip "$py cannot import torch"
version=$("$py" -c 'import torch; print(torch.__version__)')
cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [[ $("$py" -c 'import torch; print(torch.version.cuda or "")') != "" && ! -x $cuda_root/bin/nvcc ]]; then
  skip "torch $version is a CUDA build and its CMake package needs a CUDA toolkit ($cuda_root/bin/nvcc is missing)"
fi
site=$(cd "$torch_cmake/../../.." && pwd)  # the wheel's site-packages: torch/, nvidia/
nvidia_libs=$(find "$site/nvidia" -maxdepth 2 -name lib -type d 2>/dev/null | paste -sd:)
gloo=$(ldd "$prefix/lib/libaccel_runtime.so" | awk '$1 ~ /^libgloo/ {print $3; exit}')
[[ -f $gloo ]] || { echo "build.sh: $prefix/lib/libaccel_runtime.so loads no Gloo that ldd can find" >&2; exit 1; }
arch=${TORCH_CUDA_ARCH_LIST:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 || true)}

# A build directory configured from another source folder cannot be reused.
grep -qs "^CMAKE_HOME_DIRECTORY:INTERNAL=$here\$" "$build/CMakeCache.txt" || rm -rf "$build"
mkdir -p "$build"
if ! cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$prefix;$torch_cmake" -DCUDAToolkit_ROOT="$cuda_root" -DTORCH_CUDA_ARCH_LIST="${arch:-9.0}" \
  -Dc10_LIBRARY="$site/torch/lib/libc10.so" \
  -DCMAKE_EXE_LINKER_FLAGS="${nvidia_libs:+-Wl,-rpath-link,$nvidia_libs }-Wl,--no-as-needed,$gloo,--as-needed" \
  >"$build/configure.log" 2>&1; then
  tail -n 20 "$build/configure.log"
  echo "build.sh: FAIL: cmake could not configure $build against torch $version (full log: $build/configure.log)" >&2
  exit 1
fi
grep -E '^-- accel: torch component' "$build/configure.log"
if ! cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >"$build/build.log" 2>&1; then
  tail -n 60 "$build/build.log"
  echo "build.sh: FAIL: build of ${targets[*]} in $build (full log: $build/build.log)" >&2
  exit 1
fi
echo "built ${targets[*]} against torch $version in $((SECONDS - start)) s"
