// Matrix products on CUDA (cuBLAS): against the CPU for every transpose combination and beta, f32
// exact (allow_tf32 off) and f64; TF32 within its precision and exact float32 measurably better;
// the bare library call gives the same bits. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "tests/kernels/gemm_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;

class GemmCuda : public testing::CudaOpTest {
 protected:
  // op on the GPU into a copy of out_initial (poisoned when beta = 0), as doubles.
  std::vector<double> run_gpu(const testing::GemmCase& g, const testing::GemmOperands& in) {
    const Tensor out = copy_to(in.out_initial, gs());
    if (g.beta == 0) testing::poison(out, gs());
    matmul(*gpu, copy_to(in.a, gs()), copy_to(in.b, gs()), out, g.transpose_a, g.transpose_b, g.alpha, g.beta);
    return testing::to_doubles(out, gs());
  }
  std::vector<double> run_cpu(const testing::GemmCase& g, const testing::GemmOperands& in) {
    const Tensor out = in.out_initial.to(Device::cpu(), cpu.stream());
    matmul(cpu, in.a, in.b, out, g.transpose_a, g.transpose_b, g.alpha, g.beta);
    return testing::to_doubles(out, cpu.stream());
  }
};

// Largest |x - ref| relative to the largest |ref|.
double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return err / scale;
}

TEST_F(GemmCuda, ExactFloat32AndFloat64MatchTheCpu) {
  ASSERT_FALSE(gpu->allow_tf32());  // the default: exact float32
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const testing::GemmCase& g : testing::gemm_cases()) {
      SCOPED_TRACE(testing::gemm_case_name(g, dtype));
      const testing::GemmOperands in = testing::gemm_operands(g, dtype, cpu.stream());
      // Both sides sum K float products in some order: a few ulps of the row's magnitude.
      const double tol = dtype == DType::f64 ? 1e-12 : 1e-6 * static_cast<double>(g.k + 1);
      EXPECT_TRUE(testing::all_close(run_gpu(g, in), run_cpu(g, in), tol, tol));
    }
  }
}

TEST_F(GemmCuda, Tf32IsWithinItsPrecisionAndOffByDefault) {
  const testing::GemmCase g{256, 192, 1024, false, true, 1.0, 0.0};
  const testing::GemmOperands in = testing::gemm_operands(g, DType::f32, cpu.stream());
  const std::vector<double> ref = testing::gemm_reference(g, in, cpu.stream());
  const double exact = relative_error(run_gpu(g, in), ref);
  gpu->set_allow_tf32(true);
  const double tf32 = relative_error(run_gpu(g, in), ref);
  gpu->set_allow_tf32(false);
  EXPECT_LT(exact, 1e-5) << "float32 without TF32";
  EXPECT_LT(tf32, 1e-2) << "TF32";
  // TF32 keeps 10 mantissa bits: over K = 1024 its error is far above exact float32's.
  EXPECT_GT(tf32, 10 * exact) << "allow_tf32 seems to make no difference (exact " << exact << ", tf32 " << tf32 << ")";
}

TEST_F(GemmCuda, LibraryCallGivesTheSameBits) {
  const testing::GemmCase g{33, 65, 17, true, false, 1.0, 1.0};
  const testing::GemmOperands in = testing::gemm_operands(g, DType::f32, cpu.stream());
  const Tensor a = copy_to(in.a, gs()), b = copy_to(in.b, gs());
  const Tensor via_op = copy_to(in.out_initial, gs()), via_call = copy_to(in.out_initial, gs());
  matmul(*gpu, a, b, via_op, true, false, 1.0, 1.0);
  const std::function<void()> call = matmul_library_call(*gpu, a, b, via_call, true, false, 1.0, 1.0);
  ASSERT_TRUE(call);
  call();
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(via_call, gs()), testing::to_doubles(via_op, gs())));
}

TEST_F(GemmCuda, EmptyInnerDimensionScalesTheOutput) {
  const Tensor a = Tensor::empty(Shape{3, 0}, DType::f32, *gpu), b = Tensor::empty(Shape{0, 2}, DType::f32, *gpu);
  const Tensor init = testing::random_tensor(Shape{3, 2}, DType::f32, cpu.stream(), 1);
  const Tensor out = copy_to(init, gs());
  matmul(*gpu, a, b, out, false, false, 1.0, -1.0);
  std::vector<double> expected = testing::to_doubles(init, cpu.stream());
  for (double& v : expected) v = -v;
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(out, gs()), expected));
}

}  // namespace
}  // namespace baton::kernels
