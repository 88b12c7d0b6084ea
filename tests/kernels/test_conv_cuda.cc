// Convolution on CUDA (cuDNN) against the CPU over the shared problems (tests/kernels/conv_reference.h):
// exact float32 (allow_tf32 off) and float64 tightly, TF32 within its precision; the algorithm
// cache (a second call hits it; the deterministic flag and the workspace limit restrict and key
// it); the bare library call gives the same bits. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::ConvCase;
using testing::copy_to;

// The four passes' results, as doubles.
struct ConvResults {
  std::vector<double> y, dx, dw, db;
};

class ConvCuda : public testing::CudaOpTest {
 protected:
  // Every pass of case c on ctx's device from the same random CPU inputs: forward with bias, data
  // gradient into a poisoned tensor, filter and bias gradients accumulated onto random values.
  ConvResults run(Context& ctx, const ConvCase& c, DType dtype) {
    const Stream& s = ctx.stream();
    const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
    auto input = [&](const Shape& shape, uint64_t seed) {
      return copy_to(testing::random_tensor(shape, dtype, cpu.stream(), seed), s);
    };
    const Tensor x = input(c.x, 1), w = input(c.w, 2), dy = input(ys, 3), bias = input(Shape{c.w[0]}, 4);
    const Tensor dw = input(c.w, 5), db = input(Shape{c.w[0]}, 6);
    const Tensor y = testing::poisoned(ys, dtype, ctx.stream()), dx = testing::poisoned(c.x, dtype, ctx.stream());
    conv2d_forward(ctx, x, w, bias, c.params, y);
    conv2d_backward_data(ctx, dy, w, c.params, dx);
    conv2d_backward_filter(ctx, x, dy, c.params, dw);
    conv2d_backward_bias(ctx, dy, db);
    return {testing::to_doubles(y, s), testing::to_doubles(dx, s), testing::to_doubles(dw, s),
            testing::to_doubles(db, s)};
  }

  // |g - c| <= atol + rtol·|c| element by element; with `scaled`, atol is relative to the largest |c|
  // of each tensor (TF32 errors grow with the magnitudes summed, not with each result's own size).
  void expect_close(const ConvResults& g, const ConvResults& c, double rtol, double atol, bool scaled = false) {
    auto check = [&](const std::vector<double>& gv, const std::vector<double>& cv, const char* what) {
      double largest = 0;
      for (double v : cv) largest = std::max(largest, std::abs(v));
      EXPECT_TRUE(testing::all_close(gv, cv, rtol, scaled ? atol * largest : atol)) << what;
    };
    check(g.y, c.y, "forward");
    check(g.dx, c.dx, "backward data");
    check(g.dw, c.dw, "backward filter");
    check(g.db, c.db, "backward bias");
  }
};

TEST_F(ConvCuda, ExactFloat32AndFloat64MatchTheCpu) {
  ASSERT_FALSE(gpu->allow_tf32());
  for (const ConvCase& c : testing::conv_cases()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(c.name + ", " + std::string(dtype_name(dtype)));
      // Sums of at most a few hundred products of magnitude <= 1, in another order (and, for
      // Winograd or FFT algorithms, through transforms): ~1e-4 relative for float32.
      const double tol = dtype == DType::f64 ? 1e-11 : 1e-4;
      expect_close(run(*gpu, c, dtype), run(cpu, c, dtype), tol, tol);
    }
  }
}

TEST_F(ConvCuda, Tf32MatchesTheCpuWithinItsPrecision) {
  gpu->set_allow_tf32(true);
  for (const ConvCase& c : testing::conv_cases()) {
    SCOPED_TRACE(c.name);
    expect_close(run(*gpu, c, DType::f32), run(cpu, c, DType::f32), 1e-2, 5e-3, true);
  }
  // A ResNet-sized reduction (C·R·S = 576) where TF32 rounding shows.
  const ConvCase big{"64 channels 3x3", Shape{2, 64, 14, 14}, Shape{32, 64, 3, 3}, {.padding = {1, 1}}};
  expect_close(run(*gpu, big, DType::f32), run(cpu, big, DType::f32), 1e-2, 5e-3, true);
}

TEST_F(ConvCuda, AlgorithmIsMeasuredOnceThenCached) {
  clear_conv2d_algorithm_cache();
  const ConvCase c{"cache", Shape{2, 8, 12, 12}, Shape{16, 8, 3, 3}, {.padding = {1, 1}}};
  const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
  const Tensor x = copy_to(testing::random_tensor(c.x, DType::f32, cpu.stream(), 7), gs());
  const Tensor w = copy_to(testing::random_tensor(c.w, DType::f32, cpu.stream(), 8), gs());
  const Tensor y = testing::poisoned(ys, DType::f32, gs());
  EXPECT_FALSE(cached_conv2d_algorithm(*gpu, Conv2dPass::forward, c.x, c.w, c.params, DType::f32).has_value());
  conv2d_forward(*gpu, x, w, Tensor(), c.params, y);
  Conv2dAlgorithmCacheStats stats = conv2d_algorithm_cache_stats();
  EXPECT_EQ(stats.entries, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.hits, 0);
  const std::vector<double> first = testing::to_doubles(y, gs());
  conv2d_forward(*gpu, x, w, Tensor(), c.params, y);
  stats = conv2d_algorithm_cache_stats();
  EXPECT_EQ(stats.entries, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(y, gs()), first));
  const std::optional<Conv2dAlgorithm> algo =
      cached_conv2d_algorithm(*gpu, Conv2dPass::forward, c.x, c.w, c.params, DType::f32);
  ASSERT_TRUE(algo.has_value());
  EXPECT_EQ(algo->math_type, 3) << "f32 without allow_tf32 must run with CUDNN_FMA_MATH";
  EXPECT_LE(algo->workspace_bytes, gpu->workspace_limit());

  // Another setting is another key: measured again.
  gpu->set_allow_tf32(true);
  conv2d_forward(*gpu, x, w, Tensor(), c.params, y);
  gpu->set_allow_tf32(false);
  stats = conv2d_algorithm_cache_stats();
  EXPECT_EQ(stats.entries, 2);
  EXPECT_EQ(stats.misses, 2);
}

TEST_F(ConvCuda, DeterministicModeUsesOnlyDeterministicAlgorithms) {
  clear_conv2d_algorithm_cache();
  gpu->set_deterministic(true);
  const ConvCase c{"deterministic", Shape{8, 32, 14, 14}, Shape{32, 32, 3, 3}, {.padding = {1, 1}}};
  const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
  const Tensor x = copy_to(testing::random_tensor(c.x, DType::f32, cpu.stream(), 9), gs());
  const Tensor w = copy_to(testing::random_tensor(c.w, DType::f32, cpu.stream(), 10), gs());
  const Tensor dy = copy_to(testing::random_tensor(ys, DType::f32, cpu.stream(), 11), gs());
  std::vector<double> dx_runs[2], dw_runs[2];
  for (int run = 0; run < 2; ++run) {
    const Tensor dx = testing::poisoned(c.x, DType::f32, gs());
    Tensor dw = Tensor::empty(c.w, DType::f32, *gpu);
    dw.fill(0.0, gs());
    conv2d_backward_data(*gpu, dy, w, c.params, dx);
    conv2d_backward_filter(*gpu, x, dy, c.params, dw);
    dx_runs[run] = testing::to_doubles(dx, gs());
    dw_runs[run] = testing::to_doubles(dw, gs());
  }
  EXPECT_TRUE(testing::identical_values(dx_runs[1], dx_runs[0]));
  EXPECT_TRUE(testing::identical_values(dw_runs[1], dw_runs[0]));
  const auto data = cached_conv2d_algorithm(*gpu, Conv2dPass::backward_data, c.x, c.w, c.params, DType::f32);
  const auto filter = cached_conv2d_algorithm(*gpu, Conv2dPass::backward_filter, c.x, c.w, c.params, DType::f32);
  ASSERT_TRUE(data.has_value() && filter.has_value());
  EXPECT_TRUE(data->deterministic);
  EXPECT_TRUE(filter->deterministic);
  EXPECT_NE(data->algo, 0) << "CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 is not deterministic";
  EXPECT_NE(filter->algo, 0) << "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 is not deterministic";
  EXPECT_NE(filter->algo, 3) << "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3 is not deterministic";
  // The non-deterministic setting is another cache entry.
  gpu->set_deterministic(false);
  EXPECT_FALSE(cached_conv2d_algorithm(*gpu, Conv2dPass::backward_filter, c.x, c.w, c.params, DType::f32));
}

TEST_F(ConvCuda, WorkspaceLimitIsRespected) {
  clear_conv2d_algorithm_cache();
  gpu->set_workspace_limit(0);
  const ConvCase c = testing::conv_cases()[0];
  const ConvResults g = run(*gpu, c, DType::f32);
  gpu->set_workspace_limit(size_t{1} << 30);
  expect_close(g, run(cpu, c, DType::f32), 1e-4, 1e-4);
  Context limited(Device::cuda());
  limited.set_workspace_limit(0);
  for (Conv2dPass pass : {Conv2dPass::forward, Conv2dPass::backward_data, Conv2dPass::backward_filter}) {
    const auto algo = cached_conv2d_algorithm(limited, pass, c.x, c.w, c.params, DType::f32);
    ASSERT_TRUE(algo.has_value()) << static_cast<int>(pass);
    EXPECT_EQ(algo->workspace_bytes, 0u) << static_cast<int>(pass);
  }
}

TEST_F(ConvCuda, LibraryCallsGiveTheSameBits) {
  gpu->set_deterministic(true);  // run-to-run identical results need deterministic algorithms
  const ConvCase c = testing::conv_cases()[1];
  const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
  const Tensor x = copy_to(testing::random_tensor(c.x, DType::f32, cpu.stream(), 12), gs());
  const Tensor w = copy_to(testing::random_tensor(c.w, DType::f32, cpu.stream(), 13), gs());
  const Tensor dy = copy_to(testing::random_tensor(ys, DType::f32, cpu.stream(), 14), gs());
  const Tensor dw_init = testing::random_tensor(c.w, DType::f32, cpu.stream(), 15);
  const Tensor y_op = testing::poisoned(ys, DType::f32, gs()), y_call = testing::poisoned(ys, DType::f32, gs());
  const Tensor dx_op = testing::poisoned(c.x, DType::f32, gs()), dx_call = testing::poisoned(c.x, DType::f32, gs());
  const Tensor dw_op = copy_to(dw_init, gs()), dw_call = copy_to(dw_init, gs());
  conv2d_forward(*gpu, x, w, Tensor(), c.params, y_op);
  conv2d_backward_data(*gpu, dy, w, c.params, dx_op);
  conv2d_backward_filter(*gpu, x, dy, c.params, dw_op);
  for (const auto& call : {conv2d_library_call(*gpu, Conv2dPass::forward, x, w, y_call, c.params),
                           conv2d_library_call(*gpu, Conv2dPass::backward_data, dx_call, w, dy, c.params),
                           conv2d_library_call(*gpu, Conv2dPass::backward_filter, x, dw_call, dy, c.params)}) {
    ASSERT_TRUE(call);
    call();
  }
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(y_call, gs()), testing::to_doubles(y_op, gs())));
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(dx_call, gs()), testing::to_doubles(dx_op, gs())));
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(dw_call, gs()), testing::to_doubles(dw_op, gs())));
}

// The algorithm search takes a temporary workspace for the largest candidate: afterwards the
// context's workspace is exactly what the chosen algorithm needs, not what the search needed. Each
// pass of several problems in a fresh context with an empty cache, so searches whose fastest
// algorithm is not their largest are among them.
TEST_F(ConvCuda, SearchWorkspaceIsNotKeptByTheContext) {
  for (size_t i = 0; i < 5; ++i) {
    const ConvCase c = testing::conv_cases()[i];
    for (const Conv2dPass pass : {Conv2dPass::forward, Conv2dPass::backward_data, Conv2dPass::backward_filter}) {
      clear_conv2d_algorithm_cache();
      Context ctx(Device::cuda());
      const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
      const Tensor x = copy_to(testing::random_tensor(c.x, DType::f32, cpu.stream(), 40), ctx.stream());
      const Tensor w = copy_to(testing::random_tensor(c.w, DType::f32, cpu.stream(), 41), ctx.stream());
      const Tensor dy = copy_to(testing::random_tensor(ys, DType::f32, cpu.stream(), 42), ctx.stream());
      if (pass == Conv2dPass::forward) {
        conv2d_forward(ctx, x, w, Tensor(), c.params, testing::poisoned(ys, DType::f32, ctx.stream()));
      } else if (pass == Conv2dPass::backward_data) {
        conv2d_backward_data(ctx, dy, w, c.params, testing::poisoned(c.x, DType::f32, ctx.stream()));
      } else {
        conv2d_backward_filter(ctx, x, dy, c.params,
                               copy_to(testing::random_tensor(c.w, DType::f32, cpu.stream(), 43), ctx.stream()));
      }
      const std::optional<Conv2dAlgorithm> algo = cached_conv2d_algorithm(ctx, pass, c.x, c.w, c.params, DType::f32);
      ASSERT_TRUE(algo.has_value()) << c.name;
      EXPECT_EQ(ctx.workspace_bytes(), algo->workspace_bytes) << c.name << ", pass " << static_cast<int>(pass);
    }
  }
}

TEST_F(ConvCuda, MisalignedViewsHaveTheirOwnAlgorithms) {
  clear_conv2d_algorithm_cache();
  const ConvCase c = testing::conv_cases()[0];
  const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
  const Tensor x = testing::random_tensor(c.x, DType::f32, cpu.stream(), 18);
  const Tensor w = testing::random_tensor(c.w, DType::f32, cpu.stream(), 19);
  const Tensor dy = testing::random_tensor(ys, DType::f32, cpu.stream(), 20);
  // Views one element into their buffers: 4-byte aligned, as micro-batch slices can be.
  const Tensor gx = copy_to(x, gs(), true), gw = copy_to(w, gs(), true), gdy = copy_to(dy, gs(), true);
  const Tensor gy = testing::poisoned(ys, DType::f32, gs(), true), gdx = testing::poisoned(c.x, DType::f32, gs(), true);
  Tensor gdw = testing::empty_view(c.w, DType::f32, gs(), true);
  gdw.fill(0.0, gs());
  conv2d_forward(*gpu, gx, gw, Tensor(), c.params, gy);
  conv2d_backward_data(*gpu, gdy, gw, c.params, gdx);
  conv2d_backward_filter(*gpu, gx, gdy, c.params, gdw);
  const Tensor y = Tensor::empty(ys, DType::f32, cpu), dx = Tensor::empty(c.x, DType::f32, cpu);
  Tensor dw = Tensor::empty(c.w, DType::f32, cpu);
  dw.fill(0.0, cpu.stream());
  conv2d_forward(cpu, x, w, Tensor(), c.params, y);
  conv2d_backward_data(cpu, dy, w, c.params, dx);
  conv2d_backward_filter(cpu, x, dy, c.params, dw);
  for (const auto& [g, h, what] :
       {std::tuple{gy, y, "forward"}, std::tuple{gdx, dx, "backward data"}, std::tuple{gdw, dw, "backward filter"}}) {
    EXPECT_TRUE(testing::all_close(testing::to_doubles(g, gs()), testing::to_doubles(h, cpu.stream()), 1e-4, 1e-4))
        << what;
  }
  EXPECT_EQ(conv2d_algorithm_cache_stats().entries, 3);
  // The aligned-tensor entry is not the one these views used.
  EXPECT_FALSE(cached_conv2d_algorithm(*gpu, Conv2dPass::forward, c.x, c.w, c.params, DType::f32).has_value());
}

TEST_F(ConvCuda, EmptyBatchIsANoOp) {
  const Conv2dParams p{.padding = {1, 1}};
  const Tensor x = Tensor::empty(Shape{0, 3, 5, 5}, DType::f32, *gpu);
  const Tensor w = copy_to(testing::random_tensor(Shape{4, 3, 3, 3}, DType::f32, cpu.stream(), 16), gs());
  const Tensor y = Tensor::empty(Shape{0, 4, 5, 5}, DType::f32, *gpu);
  conv2d_forward(*gpu, x, w, Tensor(), p, y);
  const Tensor dw = copy_to(testing::random_tensor(Shape{4, 3, 3, 3}, DType::f32, cpu.stream(), 17), gs());
  const std::vector<double> before = testing::to_doubles(dw, gs());
  conv2d_backward_filter(*gpu, x, y, p, dw);
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(dw, gs()), before));
}

}  // namespace
}  // namespace baton::kernels
