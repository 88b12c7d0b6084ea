// CUDA loss kernels. Row ops (softmax cross-entropy forward, top-k) give each row to a group of
// threads: one warp per row for up to kWarpRowMaxClasses classes (8 rows per block), one block of
// kBlockRowThreads otherwise. Row reductions go through warp shuffles (and shared memory across the
// warps of a block) in a fixed order, so results are deterministic. The mean over rows is a second,
// single-block pass over per-row losses kept in double. The backward pass is a grid-stride
// elementwise kernel with 16-byte vectors when probs and dlogits are 16-byte aligned.
#include <cuda_runtime.h>
#include <math_constants.h>

#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/loss_cuda.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/deferred_check_types.h"
#include "kernels/dispatch.h"
#include "kernels/loss_math.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpRowThreads = 256;   // blocks of 8 warps, one row per warp
constexpr int kBlockRowThreads = 512;  // one row per block
constexpr int64_t kWarpRowMaxClasses = 1024;
constexpr int kSingleBlockThreads = 1024;  // label check and mean over rows

struct SumOp {
  template <typename V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};
// fmax ignores NaN and is symmetric, so every lane of a butterfly reduction ends with the same value.
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};
struct MinOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a < b ? a : b; }
};

__device__ __forceinline__ float exp_acc(float x) { return expf(x); }
__device__ __forceinline__ double exp_acc(double x) { return exp(x); }
__device__ __forceinline__ float log_acc(float x) { return logf(x); }
__device__ __forceinline__ double log_acc(double x) { return log(x); }

// Reduces v over a group of kGroup consecutive threads: a warp (kGroup == 32) or the whole block
// (kGroup == blockDim.x, a multiple of 32). Every thread of the group must call it and receives the
// result, combined in a fixed order (a xor butterfly gives every lane the same value because each
// step adds the same two operands). `scratch`: kGroup / 32 values of shared memory.
template <int kGroup, typename V, typename Op>
__device__ __forceinline__ V group_reduce(V v, Op op, V* scratch) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if constexpr (kGroup > kWarp) {
    __syncthreads();  // earlier readers of scratch are done
    if (threadIdx.x % kWarp == 0) scratch[threadIdx.x / kWarp] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < kGroup / kWarp; ++w) v = op(v, scratch[w]);
  }
  return v;
}

// One block: counts the labels outside [0, classes); when there are some and the record holds no
// failure yet, records {op, count, first bad row, its label, classes, tag} (kernels/deferred_check_types.h).
template <typename L>
__global__ void __launch_bounds__(kSingleBlockThreads)
    check_labels_kernel(const L* __restrict__ labels, int64_t rows, int64_t classes, int64_t op, int64_t tag,
                        LabelCheckRecord* __restrict__ record) {
  __shared__ int64_t scratch[kSingleBlockThreads / kWarp];
  int64_t bad = 0, first = rows;
  for (int64_t r = threadIdx.x; r < rows; r += kSingleBlockThreads) {
    const int64_t y = static_cast<int64_t>(labels[r]);
    if (y < 0 || y >= classes) {
      ++bad;
      first = r < first ? r : first;
    }
  }
  bad = group_reduce<kSingleBlockThreads>(bad, SumOp{}, scratch);
  first = group_reduce<kSingleBlockThreads>(first, MinOp{}, scratch);
  if (threadIdx.x == 0 && bad != 0 && record->op == static_cast<int64_t>(CheckedOp::none)) {
    record->op = op;
    record->count = bad;
    record->first_row = first;
    record->first_value = static_cast<int64_t>(labels[first]);
    record->classes = classes;
    record->tag = tag;
  }
}

// Per row, with z = x - max(x) and s = sum exp(z): probs = exp(z) / s and row_loss the smoothed
// cross-entropy of kernels/loss_math.h (keep = 1 - eps, spread = eps / C).
template <int kGroup, int kThreads, typename T, typename L>
__global__ void __launch_bounds__(kThreads)
    softmax_ce_forward_kernel(const T* __restrict__ logits, const L* __restrict__ labels, int64_t rows, int64_t classes,
                              Acc<T> keep, Acc<T> spread, T* __restrict__ probs, double* __restrict__ row_loss) {
  using A = Acc<T>;
  constexpr int kGroupsPerBlock = kThreads / kGroup;
  __shared__ A scratch[kGroup / kWarp];
  const int lane = static_cast<int>(threadIdx.x) % kGroup;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroup; r < rows;
       r += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const T* x = logits + r * classes;
    A max = -static_cast<A>(CUDART_INF);
    for (int64_t c = lane; c < classes; c += kGroup) max = MaxOp{}(max, load(x[c]));
    max = group_reduce<kGroup>(max, MaxOp{}, scratch);
    A sum_exp = 0, sum_z = 0;
    for (int64_t c = lane; c < classes; c += kGroup) {
      const A z = load(x[c]) - max;
      sum_exp += exp_acc(z);
      sum_z += z;
    }
    sum_exp = group_reduce<kGroup>(sum_exp, SumOp{}, scratch);
    sum_z = group_reduce<kGroup>(sum_z, SumOp{}, scratch);
    T* p = probs + r * classes;
    for (int64_t c = lane; c < classes; c += kGroup) p[c] = store<T>(exp_acc(load(x[c]) - max) / sum_exp);
    if (lane == 0) {
      const int64_t y = static_cast<int64_t>(labels[r]);
      const A z_label = y >= 0 && y < classes ? load(x[y]) - max : static_cast<A>(CUDART_NAN);
      row_loss[r] = static_cast<double>(smoothed_cross_entropy(log_acc(sum_exp), z_label, sum_z, keep, spread));
    }
  }
}

// One block: out = mean of the row losses, summed in double in a fixed order.
template <typename LossT>
__global__ void __launch_bounds__(kSingleBlockThreads)
    loss_mean_kernel(const double* __restrict__ row_loss, int64_t rows, LossT* __restrict__ out) {
  __shared__ double scratch[kSingleBlockThreads / kWarp];
  double sum = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += kSingleBlockThreads) sum += row_loss[r];
  sum = group_reduce<kSingleBlockThreads>(sum, SumOp{}, scratch);
  if (threadIdx.x == 0) *out = static_cast<LossT>(sum / static_cast<double>(rows));
}

// dlogits = scale * (probs - q), q = q_label at the label's class and q_other elsewhere; W elements
// per step (W > 1 needs probs and dlogits 16-byte aligned), then a scalar tail of n % W elements.
template <int W, typename T, typename L>
__global__ void softmax_ce_backward_kernel(const T* __restrict__ probs, const L* __restrict__ labels, int64_t n,
                                           int64_t classes, Acc<T> scale, Acc<T> q_label, Acc<T> q_other,
                                           T* __restrict__ dlogits) {
  const int64_t packs = n / W;
  for (int64_t pack = grid_thread(); pack < packs; pack += grid_threads()) {
    const int64_t first = pack * W;
    int64_t row = first / classes, c = first - row * classes;
    int64_t label = static_cast<int64_t>(labels[row]);
    const Vec<T, W> p = load_vec<W>(probs + first);
    Vec<T, W> d;
#pragma unroll
    for (int j = 0; j < W; ++j) {
      d.v[j] = store<T>(scale * (load(p.v[j]) - (c == label ? q_label : q_other)));
      if (++c == classes && j + 1 < W) {  // the next element starts a new row (within the pack)
        c = 0;
        label = static_cast<int64_t>(labels[++row]);
      }
    }
    store_vec<W>(dlogits + first, d);
  }
  for (int64_t i = packs * W + grid_thread(); i < n; i += grid_threads()) {
    const int64_t row = i / classes;
    const bool is_label = i - row * classes == static_cast<int64_t>(labels[row]);
    dlogits[i] = store<T>(scale * (load(probs[i]) - (is_label ? q_label : q_other)));
  }
}

// count += the rows where fewer than k logits are strictly greater than the label's (not NaN).
// Integer counts: per-block totals in shared memory, then one integer atomic per block.
template <int kGroup, int kThreads, typename T, typename L>
__global__ void __launch_bounds__(kThreads)
    topk_correct_kernel(const T* __restrict__ logits, const L* __restrict__ labels, int64_t rows, int64_t classes,
                        int k, unsigned long long* __restrict__ count) {
  using A = Acc<T>;
  constexpr int kGroupsPerBlock = kThreads / kGroup;
  __shared__ int64_t scratch[kGroup / kWarp];
  __shared__ unsigned long long block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % kGroup;
  unsigned long long correct = 0;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroup; r < rows;
       r += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const T* x = logits + r * classes;
    const int64_t y = static_cast<int64_t>(labels[r]);
    const A label_logit = y >= 0 && y < classes ? load(x[y]) : static_cast<A>(CUDART_NAN);
    int64_t greater = 0;
    for (int64_t c = lane; c < classes; c += kGroup) greater += load(x[c]) > label_logit ? 1 : 0;
    greater = group_reduce<kGroup>(greater, SumOp{}, scratch);
    if (lane == 0 && !isnan(label_logit) && greater < k) ++correct;
  }
  if (correct != 0) atomicAdd(&block_count, correct);
  __syncthreads();
  if (threadIdx.x == 0 && block_count != 0) atomicAdd(count, block_count);
}

// Blocks for a row kernel with `rows_per_block` rows per block.
unsigned row_grid(int64_t rows, int rows_per_block) {
  return detail::grid_for((rows + rows_per_block - 1) / rows_per_block, 1);
}

}  // namespace

void check_labels(Context& ctx, const void* labels, DType label_dtype, int64_t rows, int64_t classes, int64_t op,
                  void* record) {
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  dispatch_labels(label_dtype, [&]<typename L>() {
    check_labels_kernel<L><<<1, kSingleBlockThreads, 0, stream>>>(
        static_cast<const L*>(labels), rows, classes, op, ctx.check_tag(), static_cast<LabelCheckRecord*>(record));
    BATON_KERNEL_CHECK(stream, "check_labels_kernel");
  });
}

size_t softmax_cross_entropy_forward_workspace_bytes(int64_t rows) {
  return static_cast<size_t>(rows) * sizeof(double);
}

void softmax_cross_entropy_forward(Context& ctx, const void* logits, DType dtype, const void* labels, DType label_dtype,
                                   int64_t rows, int64_t classes, double smoothing, void* loss_out, void* probs_out,
                                   void* workspace) {
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  auto* row_loss = static_cast<double*>(workspace);
  dispatch_floating("softmax_cross_entropy_forward", dtype, [&]<typename T>() {
    using A = Acc<T>;
    const auto keep = static_cast<A>(1.0 - smoothing);
    const auto spread = static_cast<A>(smoothing / static_cast<double>(classes));
    const auto* x = static_cast<const T*>(logits);
    auto* p = static_cast<T*>(probs_out);
    dispatch_labels(label_dtype, [&]<typename L>() {
      const auto* y = static_cast<const L*>(labels);
      if (classes <= kWarpRowMaxClasses) {
        softmax_ce_forward_kernel<kWarp, kWarpRowThreads, T, L>
            <<<row_grid(rows, kWarpRowThreads / kWarp), kWarpRowThreads, 0, stream>>>(x, y, rows, classes, keep, spread,
                                                                                      p, row_loss);
      } else {
        softmax_ce_forward_kernel<kBlockRowThreads, kBlockRowThreads, T, L>
            <<<row_grid(rows, 1), kBlockRowThreads, 0, stream>>>(x, y, rows, classes, keep, spread, p, row_loss);
      }
      BATON_KERNEL_CHECK(stream, "softmax_ce_forward_kernel");
    });
    loss_mean_kernel<A><<<1, kSingleBlockThreads, 0, stream>>>(row_loss, rows, static_cast<A*>(loss_out));
    BATON_KERNEL_CHECK(stream, "loss_mean_kernel");
  });
}

void softmax_cross_entropy_backward(Context& ctx, const void* probs, DType dtype, const void* labels, DType label_dtype,
                                    int64_t rows, int64_t classes, double smoothing, double grad_scale, void* dlogits) {
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  const int64_t n = rows * classes;
  dispatch_floating("softmax_cross_entropy_backward", dtype, [&]<typename T>() {
    using A = Acc<T>;
    const auto scale = static_cast<A>(grad_scale / static_cast<double>(rows));
    const auto q_other = static_cast<A>(smoothing / static_cast<double>(classes));
    const auto q_label = static_cast<A>(1.0 - smoothing + smoothing / static_cast<double>(classes));
    const auto* p = static_cast<const T*>(probs);
    auto* d = static_cast<T*>(dlogits);
    dispatch_labels(label_dtype, [&]<typename L>() {
      const auto* y = static_cast<const L*>(labels);
      if (aligned16(p) && aligned16(d)) {
        constexpr int W = kVecWidth<T>;
        softmax_ce_backward_kernel<W, T, L><<<detail::grid_for(n / W + 1), detail::kBlockSize, 0, stream>>>(
            p, y, n, classes, scale, q_label, q_other, d);
      } else {
        softmax_ce_backward_kernel<1, T, L>
            <<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(p, y, n, classes, scale, q_label, q_other, d);
      }
      BATON_KERNEL_CHECK(stream, "softmax_ce_backward_kernel");
    });
  });
}

void topk_correct(Context& ctx, const void* logits, DType dtype, const void* labels, DType label_dtype, int64_t rows,
                  int64_t classes, int k, int64_t* count_out) {
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  BATON_CUDA_CHECK(cudaMemsetAsync(count_out, 0, sizeof(int64_t), stream));
  auto* count = reinterpret_cast<unsigned long long*>(count_out);
  dispatch_floating("topk_correct", dtype, [&]<typename T>() {
    const auto* x = static_cast<const T*>(logits);
    dispatch_labels(label_dtype, [&]<typename L>() {
      const auto* y = static_cast<const L*>(labels);
      if (classes <= kWarpRowMaxClasses) {
        topk_correct_kernel<kWarp, kWarpRowThreads, T, L>
            <<<row_grid(rows, kWarpRowThreads / kWarp), kWarpRowThreads, 0, stream>>>(x, y, rows, classes, k, count);
      } else {
        topk_correct_kernel<kBlockRowThreads, kBlockRowThreads, T, L>
            <<<row_grid(rows, 1), kBlockRowThreads, 0, stream>>>(x, y, rows, classes, k, count);
      }
      BATON_KERNEL_CHECK(stream, "topk_correct_kernel");
    });
  });
}

}  // namespace baton::kernels::cuda
