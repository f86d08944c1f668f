// SPDX-License-Identifier: Apache-2.0
// One thread per output element; each thread sums in the CPU path's order (apps/train/mlp.cc)
// with __fmul_rn/__fadd_rn, so nvcc cannot contract them into FMAs the CPU build does not use.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "apps/train/mlp_cuda.h"
#include "runtime/amp/amp_kernels.h"
#include "runtime/comm/cuda_check.h"

namespace accel::train {

namespace {

constexpr int kThreads = 256;
constexpr int F = kFeatures;
constexpr int C = kClasses;

void check(cudaError_t e, const char* what) { checkCuda(e, std::string("accel-train (CUDA): ") + what); }

unsigned blocks(size_t n) {
  return n ? static_cast<unsigned>((n + kThreads - 1) / kThreads) : 1u;
}  // never an empty grid

template <typename T> struct DeviceArray {
  T* p = nullptr;
  size_t n = 0;
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p); }
  void reserve(size_t count) {  // contents are not kept
    if (count <= n) return;
    cudaFree(p);
    p = nullptr;
    n = 0;  // stays consistent when the allocation below throws
    check(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)), "cudaMalloc");
    n = count;
  }
  void upload(const T* host, size_t count) {
    reserve(count);
    check(cudaMemcpy(p, host, count * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
};

__global__ void gatherRows(const float* X, const int32_t* Y, const int64_t* rows, size_t n, float* x, int32_t* y) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n * F) return;
  size_t s = i / F, f = i % F;
  x[i] = X[size_t(rows[s]) * F + f];
  if (f == 0) y[s] = Y[rows[s]];
}

// out[s][o] = b[o] + sum_i W[o][i] in[s][i] (ReLU'd when `relu`): both layers of Mlp::forward.
__global__ void dense(const float* W, const float* b, const float* in, size_t n, int inputs, int outputs, bool relu,
                      float* out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n * outputs) return;
  size_t s = i / outputs, o = i % outputs;
  float acc = b[o];
  for (int k = 0; k < inputs; ++k) acc = __fadd_rn(acc, __fmul_rn(W[o * inputs + k], in[s * inputs + k]));
  out[i] = relu && acc < 0.0f ? 0.0f : acc;  // std::max(acc, 0.0f): NaN stays NaN, as on the CPU
}

// Per sample: the loss and d(loss * scale / divisor)/d(logits), as Mlp::forward/backward.
__global__ void softmaxLoss(const float* logits, const int32_t* y, size_t n, float scale, double divisor, double* loss,
                            float* dlogits) {
  size_t s = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (s >= n) return;
  const float* l = logits + s * C;
  float top = l[0];
  for (int c = 1; c < C; ++c) top = fmaxf(top, l[c]);
  double sum = 0;
  for (int c = 0; c < C; ++c) sum += expf(__fsub_rn(l[c], top));
  loss[s] = log(sum) + top - l[y[s]];
  for (int c = 0; c < C; ++c) {
    double p = expf(__fsub_rn(l[c], top)) / sum;
    dlogits[s * C + c] = static_cast<float>((p - (c == y[s] ? 1.0 : 0.0)) * scale / divisor);
  }
}

// gW2[c][j] += sum_s d[s][c] h[s][j]; the thread with j == H also does gb2[c] += sum_s d[s][c].
__global__ void gradLayer2(const float* d, const float* h, size_t n, int H, float* gW2, float* gb2) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(C) * (H + 1)) return;
  size_t c = i / (H + 1), j = i % (H + 1);
  if (j == size_t(H)) {
    float g = gb2[c];
    for (size_t s = 0; s < n; ++s) g = __fadd_rn(g, d[s * C + c]);
    gb2[c] = g;
    return;
  }
  float g = gW2[c * H + j];
  for (size_t s = 0; s < n; ++s) g = __fadd_rn(g, __fmul_rn(d[s * C + c], h[s * H + j]));
  gW2[c * H + j] = g;
}

__global__ void hiddenGrad(const float* d, const float* W2, const float* h, size_t n, int H, float* dh) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n * H) return;
  size_t s = i / H, j = i % H;
  float acc = 0;
  for (int c = 0; c < C; ++c) acc = __fadd_rn(acc, __fmul_rn(d[s * C + c], W2[c * H + j]));
  dh[i] = h[i] > 0 ? acc : 0.0f;
}

__global__ void gradBias1(const float* dh, size_t n, int H, float* gb1) {
  size_t j = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (j >= size_t(H)) return;
  float g = gb1[j];
  for (size_t s = 0; s < n; ++s) g = __fadd_rn(g, dh[s * H + j]);
  gb1[j] = g;
}

// Rows [r0, r1) of gW1 (stored from `g`): g[j - r0][f] += sum_s dh[s][j] x[s][f].
__global__ void gradRows1(const float* dh, const float* x, size_t n, int H, size_t r0, size_t r1, float* g) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= (r1 - r0) * F) return;
  size_t j = r0 + i / F, f = i % F;
  float acc = g[i];
  for (size_t s = 0; s < n; ++s) acc = __fadd_rn(acc, __fmul_rn(dh[s * H + j], x[s * F + f]));
  g[i] = acc;
}

__global__ void sgdMomentum(float* w, float* m, const float* g, size_t n, float lr) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = __fadd_rn(__fmul_rn(0.9f, m[i]), g[i]);
  m[i] = v;
  w[i] = __fsub_rn(w[i], __fmul_rn(lr, v));
}

}  // namespace

struct CudaMlp::Impl {
  int H;
  int w1_blocks;
  bool half_working, bf16;
  DeviceArray<float> X;
  DeviceArray<int32_t> Y;
  DeviceArray<float> master[4], momentum[4], working[4];
  DeviceArray<uint16_t> half_scratch;
  DeviceArray<int64_t> rows;
  DeviceArray<float> x, h, logits, dlogits, dh;
  DeviceArray<int32_t> y;
  DeviceArray<double> loss;
  DeviceArray<int> found_inf;
  size_t sizes[4];

  const float* weight(int p) const { return half_working ? working[p].p : master[p].p; }

  void refreshWorking() {
    if (!half_working) return;
    for (int p = 0; p < 4; ++p) {
      half_scratch.reserve(sizes[p]);
      if (bf16) {
        cuda::castToBf16(master[p].p, half_scratch.p, sizes[p]);
        cuda::castFromBf16(half_scratch.p, working[p].p, sizes[p]);
      } else {
        cuda::castToFp16(master[p].p, half_scratch.p, sizes[p]);
        cuda::castFromFp16(half_scratch.p, working[p].p, sizes[p]);
      }
    }
    check(cudaGetLastError(), "refreshing the half-precision working copy");
  }

  void forward(size_t n) {
    h.reserve(n * H);
    logits.reserve(n * C);
    dense<<<blocks(n * H), kThreads>>>(weight(0), weight(1), x.p, n, F, H, true, h.p);
    dense<<<blocks(n * C), kThreads>>>(weight(2), weight(3), h.p, n, H, C, false, logits.p);
  }
};

bool CudaMlp::built() { return true; }

CudaMlp::CudaMlp(const Mlp& model, const Dataset& train, int device, bool half_working, bool bf16)
    : impl_(std::make_unique<Impl>()) {
  check(cudaSetDevice(device), "cudaSetDevice");
  Impl& m = *impl_;
  m.H = model.hidden;
  m.w1_blocks = model.w1_blocks;
  m.half_working = half_working;
  m.bf16 = bf16;
  m.X.upload(train.x.data(), train.x.size());
  m.Y.upload(train.y.data(), train.y.size());
  for (int p = 0; p < 4; ++p) {
    m.sizes[p] = model.params[static_cast<size_t>(p)].size();
    m.master[p].reserve(m.sizes[p]);
    m.momentum[p].reserve(m.sizes[p]);
    if (half_working) m.working[p].reserve(m.sizes[p]);
  }
  m.found_inf.reserve(1);
}

CudaMlp::~CudaMlp() = default;

void CudaMlp::upload(const std::vector<std::vector<float>>& masters, const std::vector<std::vector<float>>& momentum) {
  for (int p = 0; p < 4; ++p) {
    impl_->master[p].upload(masters[static_cast<size_t>(p)].data(), impl_->sizes[p]);
    impl_->momentum[p].upload(momentum[static_cast<size_t>(p)].data(), impl_->sizes[p]);
  }
  impl_->refreshWorking();
}

void CudaMlp::download(std::vector<std::vector<float>>& masters, std::vector<std::vector<float>>& momentum) const {
  for (size_t p = 0; p < 4; ++p) {
    check(cudaMemcpy(masters[p].data(), impl_->master[p].p, impl_->sizes[p] * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy of the parameters");
    check(cudaMemcpy(momentum[p].data(), impl_->momentum[p].p, impl_->sizes[p] * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy of the momentum");
  }
}

double CudaMlp::forwardBackward(const std::vector<size_t>& rows, float scale, size_t divisor,
                                const std::function<float*(size_t)>& grad, const std::function<void(size_t)>& ready) {
  Impl& m = *impl_;
  const size_t n = rows.size(), H = static_cast<size_t>(m.H), K = static_cast<size_t>(m.w1_blocks);
  std::vector<int64_t> index(rows.begin(), rows.end());
  m.rows.upload(index.data(), n);
  m.x.reserve(n * F);
  m.y.reserve(n);
  gatherRows<<<blocks(n * F), kThreads>>>(m.X.p, m.Y.p, m.rows.p, n, m.x.p, m.y.p);
  m.forward(n);
  m.loss.reserve(n);
  m.dlogits.reserve(n * C);
  softmaxLoss<<<blocks(n), kThreads>>>(m.logits.p, m.y.p, n, scale, static_cast<double>(divisor), m.loss.p,
                                       m.dlogits.p);
  gradLayer2<<<blocks(C * (H + 1)), kThreads>>>(m.dlogits.p, m.h.p, n, m.H, grad(K + 1), grad(K + 2));
  check(cudaGetLastError(), "launching the last layer's backward");
  ready(K + 2);
  ready(K + 1);  // NCCL waits for these kernels on the default stream, then overlaps the rest
  m.dh.reserve(n * H);
  hiddenGrad<<<blocks(n * H), kThreads>>>(m.dlogits.p, m.weight(2), m.h.p, n, m.H, m.dh.p);
  gradBias1<<<blocks(H), kThreads>>>(m.dh.p, n, m.H, grad(K));
  ready(K);
  for (size_t k = K; k-- > 0;) {
    const size_t r0 = k * H / K, r1 = (k + 1) * H / K;
    gradRows1<<<blocks((r1 - r0) * F), kThreads>>>(m.dh.p, m.x.p, n, m.H, r0, r1, grad(k));
    ready(k);
  }
  check(cudaGetLastError(), "launching backward");
  std::vector<double> losses(n);
  check(cudaMemcpy(losses.data(), m.loss.p, n * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy of the losses");
  double total = 0;
  for (double l : losses) total += l;
  // As the CPU path reports it: Mlp::forward's float mean, times the rows.
  return n ? static_cast<double>(static_cast<float>(total / static_cast<double>(n))) * static_cast<double>(n) : 0.0;
}

bool CudaMlp::unscale(const std::vector<float*>& grads, const std::vector<size_t>& counts, float inv_scale) {
  check(cudaMemset(impl_->found_inf.p, 0, sizeof(int)), "cudaMemset");
  for (size_t i = 0; i < grads.size(); ++i) cuda::unscaleAndCheck(grads[i], counts[i], inv_scale, impl_->found_inf.p);
  int found = 0;
  check(cudaMemcpy(&found, impl_->found_inf.p, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy of the inf flag");
  return found != 0;
}

void CudaMlp::sgd(const std::vector<Mlp::Slot>& slots, const std::vector<float*>& grads, float lr) {
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    sgdMomentum<<<blocks(s.count), kThreads>>>(impl_->master[s.param].p + s.offset,
                                               impl_->momentum[s.param].p + s.offset, grads[i], s.count, lr);
  }
  check(cudaGetLastError(), "launching the optimizer step");
  impl_->refreshWorking();
}

std::vector<float> CudaMlp::logits(const float* x, size_t n) {
  Impl& m = *impl_;
  m.x.upload(x, n * F);
  m.forward(n);
  std::vector<float> out(n * C);
  check(cudaMemcpy(out.data(), m.logits.p, out.size() * sizeof(float), cudaMemcpyDeviceToHost),
        "cudaMemcpy of the logits");
  return out;
}

}  // namespace accel::train
