// Bias ops on CUDA against the CPU: every floating dtype, rank 2 to 4, inner sizes that are and are
// not multiples of the 16-byte pack, aligned and misaligned outputs (the scalar path). Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/bias.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;
using testing::kFloatingDTypes;

const Shape kBiasShapes[] = {Shape{1, 1},           Shape{7, 1000},    Shape{3, 5, 7},   Shape{2, 16, 8, 8},
                             Shape{32, 64, 28, 28}, Shape{4, 3, 1, 1}, Shape{2, 6, 5, 3}};

class BiasCuda : public testing::CudaOpTest {};

TEST_F(BiasCuda, AddMatchesTheCpuBitForBit) {
  for (DType dtype : kFloatingDTypes) {
    for (const Shape& shape : kBiasShapes) {
      for (bool offset : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.str() + (offset ? " offset" : ""));
        const Tensor out = testing::random_tensor(shape, dtype, cpu.stream(), 1);
        const Tensor bias = testing::random_tensor(Shape{shape[1]}, dtype, cpu.stream(), 2);
        // Each device works on its own copy (the original stays untouched while copies are in flight).
        const Tensor gout = copy_to(out, gs(), offset), host_out = copy_to(out, cpu.stream());
        bias_add(*gpu, copy_to(bias, gs()), gout);
        bias_add(cpu, bias, host_out);
        // One addition in float (double for f64) and one rounding on both devices.
        EXPECT_TRUE(
            testing::identical_values(testing::to_doubles(gout, gs()), testing::to_doubles(host_out, cpu.stream())));
      }
    }
  }
}

TEST_F(BiasCuda, GradientMatchesTheCpu) {
  for (DType dtype : kFloatingDTypes) {
    for (const Shape& shape : kBiasShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.str());
      const Tensor dy = testing::random_tensor(shape, dtype, cpu.stream(), 3);
      const Tensor db = testing::random_tensor(Shape{shape[1]}, dtype, cpu.stream(), 4);
      const Tensor gdb = copy_to(db, gs()), host_db = copy_to(db, cpu.stream());
      bias_grad(*gpu, copy_to(dy, gs()), gdb);
      bias_grad(cpu, dy, host_db);
      // CUDA sums in float, the CPU in double; sums of up to 32·28·28 terms of magnitude <= 1.
      const double tol = dtype == DType::f64   ? 1e-12
                         : dtype == DType::f32 ? 1e-4
                                               : 2 * testing::default_tolerance(dtype);
      EXPECT_TRUE(
          testing::all_close(testing::to_doubles(gdb, gs()), testing::to_doubles(host_db, cpu.stream()), tol, tol));
    }
  }
}

}  // namespace
}  // namespace baton::kernels
