// cuDNN convolutions (legacy API, NCHW): the descriptors of a problem (RAII wrappers of
// kernels/cuda/cudnn_descriptors.h), the algorithm search behind the cache of
// kernels/conv_algorithm_cache.h, and the three passes. Backward filter runs with beta = 1 to
// accumulate into dw.
#include "kernels/cuda/conv_cuda.h"

#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "kernels/conv_algorithm_cache.h"
#include "kernels/cuda/cudnn_descriptors.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/cudnn_check.h"
#include "runtime/core/enum_table.h"
#include "runtime/core/storage.h"

namespace baton::kernels::cuda {
namespace {

int to_int(int64_t v) { return static_cast<int>(v); }  // kernels/conv.cc checked the range

// The descriptors of one problem, with the convolution set to `math`.
struct ConvDescriptors {
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;

  ConvDescriptors(const ConvArgs& a, cudnnMathType_t math) {
    const cudnnDataType_t t = cudnn_data_type(a.dtype);
    set_nchw(x, a.dtype, a.x[0], a.x[1], a.x[2], a.x[3]);
    set_nchw(y, a.dtype, a.y[0], a.y[1], a.y[2], a.y[3]);
    BATON_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.get(), t, CUDNN_TENSOR_NCHW, to_int(a.w[0]), to_int(a.w[1]),
                                                 to_int(a.w[2]), to_int(a.w[3])));
    const Conv2dParams& p = a.params;
    BATON_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv.get(), to_int(p.padding[0]), to_int(p.padding[1]),
                                                      to_int(p.stride[0]), to_int(p.stride[1]), to_int(p.dilation[0]),
                                                      to_int(p.dilation[1]), CUDNN_CROSS_CORRELATION, t));
    BATON_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv.get(), to_int(p.groups)));
    BATON_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), math));
  }
};

// alpha = 1 and beta (1 for backward filter, which accumulates into dw; else 0).
struct Scaling {
  ScalingFactor alpha, beta;
  Scaling(DType dtype, double beta_value) : alpha(dtype, 1.0), beta(dtype, beta_value) {}
};

// One operand of a pass: its descriptor in ConvDescriptors and its data in ConvArgs.
template <auto kDescriptor, void* ConvArgs::*kData>
struct Operand {
  static auto descriptor(const ConvDescriptors& d) { return (d.*kDescriptor).get(); }
  static void* data(const ConvArgs& a) { return a.*kData; }
};
using OperandX = Operand<&ConvDescriptors::x, &ConvArgs::x_data>;
using OperandW = Operand<&ConvDescriptors::w, &ConvArgs::w_data>;
using OperandY = Operand<&ConvDescriptors::y, &ConvArgs::y_data>;

// The cuDNN entry points of a pass: each takes its operands in the order (In1, In2, convolution, Out).
template <typename PerfT, int kAlgoCount, auto kWorkspaceSize, auto kFind, auto kRun, typename In1, typename In2,
          typename Out>
struct Pass {
  using Perf = PerfT;
  using Algo = decltype(Perf::algo);
  static constexpr int kCount = kAlgoCount;
  static void* output(const ConvArgs& a) { return Out::data(a); }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvDescriptors& d, Algo algo, size_t* bytes) {
    return kWorkspaceSize(h, In1::descriptor(d), In2::descriptor(d), d.conv.get(), Out::descriptor(d), algo, bytes);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvDescriptors& d, const ConvArgs& a, void* out, int* returned,
                            Perf* perf, void* ws, size_t bytes) {
    return kFind(h, In1::descriptor(d), In1::data(a), In2::descriptor(d), In2::data(a), d.conv.get(),
                 Out::descriptor(d), out, kCount, returned, perf, ws, bytes);
  }
  static cudnnStatus_t run(cudnnHandle_t h, const ConvDescriptors& d, const ConvArgs& a, int algo, void* ws,
                           size_t bytes, const Scaling& s) {
    return kRun(h, s.alpha.get(), In1::descriptor(d), In1::data(a), In2::descriptor(d), In2::data(a), d.conv.get(),
                static_cast<Algo>(algo), ws, bytes, s.beta.get(), Out::descriptor(d), Out::data(a));
  }
};

using ForwardPass =
    Pass<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, cudnnGetConvolutionForwardWorkspaceSize,
         cudnnFindConvolutionForwardAlgorithmEx, cudnnConvolutionForward, OperandX, OperandW, OperandY>;
using BackwardDataPass = Pass<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                              cudnnGetConvolutionBackwardDataWorkspaceSize, cudnnFindConvolutionBackwardDataAlgorithmEx,
                              cudnnConvolutionBackwardData, OperandW, OperandY, OperandX>;
using BackwardFilterPass =
    Pass<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
         cudnnGetConvolutionBackwardFilterWorkspaceSize, cudnnFindConvolutionBackwardFilterAlgorithmEx,
         cudnnConvolutionBackwardFilter, OperandX, OperandY, OperandW>;

const char* pass_name(Conv2dPass pass) {
  constexpr const char* kNames[] = {"conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"};
  return enum_lookup<Conv2dPass::backward_filter>(pass, kNames, "conv2d");
}

// The math type the search allows: f32 uses tensor cores (TF32) only when allowed.
cudnnMathType_t search_math_type(const ConvAlgorithmKey& key) {
  if (key.dtype == DType::f64) return CUDNN_DEFAULT_MATH;
  return key.allow_tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

bool uses_tensor_ops(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// Measures every algorithm of pass P on the call's tensors (cudnnFind*AlgorithmEx with a temporary
// workspace from the pool) and returns the fastest eligible one, with the problem's descriptors set
// to the math type it runs with (kept in the cache with it).
template <typename P>
CachedConvAlgorithm measure(Context& ctx, const ConvArgs& a, const ConvAlgorithmKey& key) {
  cudnnHandle_t handle = ctx.cudnn();
  const cudnnMathType_t math = search_math_type(key);
  auto descriptors = std::make_shared<ConvDescriptors>(a, math);
  const ConvDescriptors& d = *descriptors;
  // The search workspace: the most any algorithm asks for within the limit (the others cannot run).
  size_t search_bytes = 0;
  for (int i = 0; i < P::kCount; ++i) {
    size_t bytes = 0;
    if (P::workspace(handle, d, static_cast<typename P::Algo>(i), &bytes) == CUDNN_STATUS_SUCCESS &&
        bytes <= key.workspace_limit) {
      search_bytes = std::max(search_bytes, bytes);
    }
  }
  // A temporary allocation, given back (stream-ordered) when the search is done: the context's
  // workspace grows only to what the chosen algorithm needs, never to the search's maximum.
  std::shared_ptr<Storage> search_workspace;
  if (search_bytes > 0) search_workspace = Storage::allocate(search_bytes, ctx.stream());
  void* workspace = search_workspace ? search_workspace->data() : nullptr;
  // The search writes its output: dw must not be touched (it accumulates), so it gets a scratch copy.
  std::shared_ptr<Storage> scratch;
  void* out = P::output(a);
  if (a.pass == Conv2dPass::backward_filter) {
    scratch = Storage::allocate(static_cast<size_t>(a.w.numel()) * dtype_size(a.dtype), ctx.stream());
    out = scratch->data();
  }
  std::array<typename P::Perf, P::kCount> perf{};
  int returned = 0;
  BATON_CUDNN_CHECK(P::find(handle, d, a, out, &returned, perf.data(), workspace, search_bytes));
  for (int i = 0; i < returned; ++i) {
    const typename P::Perf& r = perf[static_cast<size_t>(i)];
    const bool deterministic = r.determinism == CUDNN_DETERMINISTIC;
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > key.workspace_limit) continue;
    if (key.deterministic && !deterministic) continue;
    if (math == CUDNN_FMA_MATH && uses_tensor_ops(r.mathType)) continue;
    const cudnnMathType_t run_math = math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : r.mathType;
    BATON_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), run_math));
    return {.algorithm = {.algo = static_cast<int>(r.algo),
                          .math_type = static_cast<int>(run_math),
                          .deterministic = deterministic,
                          .workspace_bytes = r.memory,
                          .measured_ms = r.time},
            .descriptors = std::move(descriptors)};
  }
  BATON_FAIL(pass_name(a.pass), ": no cuDNN algorithm is eligible for input ", a.x.str(), ", filter ", a.w.str(),
             ", output ", a.y.str(), " (", dtype_name(a.dtype), ", workspace limit ", key.workspace_limit, " bytes",
             key.deterministic ? ", deterministic only" : "", "; ", returned, " algorithms tried)");
}

// The key of the pass's problem, with the alignment its pointers share (capped at 16 bytes).
ConvAlgorithmKey key_of(const Context& ctx, const ConvArgs& a) {
  ConvAlgorithmKey key = conv_algorithm_key(ctx, a.pass, a.x, a.w, a.params, a.dtype);
  const uintptr_t bits = reinterpret_cast<uintptr_t>(a.x_data) | reinterpret_cast<uintptr_t>(a.w_data) |
                         reinterpret_cast<uintptr_t>(a.y_data) | uintptr_t{16};
  key.alignment = static_cast<int>(bits & (~bits + 1));  // the lowest set bit
  return key;
}

// The descriptors cached with an algorithm (made by measure()).
const ConvDescriptors& descriptors_of(const CachedConvAlgorithm& entry) {
  return *static_cast<const ConvDescriptors*>(entry.descriptors.get());
}

template <typename P>
void run_pass(Context& ctx, const ConvArgs& a) {
  const ConvAlgorithmKey key = key_of(ctx, a);
  const CachedConvAlgorithm entry = conv_algorithm(key, [&] { return measure<P>(ctx, a, key); });
  const Conv2dAlgorithm& algo = entry.algorithm;
  const ConvDescriptors& d = descriptors_of(entry);
  void* workspace = algo.workspace_bytes > 0 ? ctx.workspace(algo.workspace_bytes) : nullptr;
  const Scaling scaling(a.dtype, a.pass == Conv2dPass::backward_filter ? 1.0 : 0.0);
  BATON_CUDNN_CHECK(P::run(ctx.cudnn(), d, a, algo.algo, workspace, algo.workspace_bytes, scaling));
}

template <typename P>
std::function<void()> library_call(Context& ctx, const ConvArgs& a) {
  const std::optional<CachedConvAlgorithm> entry = find_conv_algorithm(key_of(ctx, a));
  BATON_CHECK(entry.has_value(), pass_name(a.pass), ": no algorithm is cached for input ", a.x.str(), ", filter ",
              a.w.str(), " with this context's settings; run the op once first");
  const Conv2dAlgorithm algo = entry->algorithm;
  // The cached descriptors, kept alive by the call.
  auto d = std::shared_ptr<const ConvDescriptors>(entry->descriptors, &descriptors_of(*entry));
  std::shared_ptr<Storage> workspace;
  if (algo.workspace_bytes > 0) workspace = Storage::allocate(algo.workspace_bytes, ctx.stream());
  const Scaling scaling(a.dtype, a.pass == Conv2dPass::backward_filter ? 1.0 : 0.0);
  // The handle belongs to ctx's device: each call makes that device current, whatever the calling
  // thread has current.
  return [device = ctx.device().index(), handle = ctx.cudnn(), d, workspace, a, algo, scaling] {
    CudaDeviceGuard call_guard(device);
    BATON_CUDNN_CHECK(
        P::run(handle, *d, a, algo.algo, workspace ? workspace->data() : nullptr, algo.workspace_bytes, scaling));
  };
}

}  // namespace

void conv2d(Context& ctx, const ConvArgs& args) {
  CudaDeviceGuard guard(ctx.device().index());
  switch (args.pass) {
    case Conv2dPass::forward:
      return run_pass<ForwardPass>(ctx, args);
    case Conv2dPass::backward_data:
      return run_pass<BackwardDataPass>(ctx, args);
    case Conv2dPass::backward_filter:
      return run_pass<BackwardFilterPass>(ctx, args);
  }
}

std::function<void()> conv2d_library_call(Context& ctx, const ConvArgs& args) {
  CudaDeviceGuard guard(ctx.device().index());
  switch (args.pass) {
    case Conv2dPass::forward:
      return library_call<ForwardPass>(ctx, args);
    case Conv2dPass::backward_data:
      return library_call<BackwardDataPass>(ctx, args);
    case Conv2dPass::backward_filter:
      return library_call<BackwardFilterPass>(ctx, args);
  }
  return {};
}

}  // namespace baton::kernels::cuda
