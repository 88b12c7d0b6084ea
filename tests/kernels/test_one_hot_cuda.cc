// one_hot on CUDA against the CPU reference: every output and index dtype, shapes of 1 to 2^20 + 3
// outputs and a rank-3 index tensor, poisoned and unaligned outputs (every element is written), and
// bad indices (a row of zeros, reported at the next synchronisation, or by the op itself with
// synchronised checks).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/deferred_checks.h"
#include "kernels/one_hot.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::kFloatingDTypes;

// Indices in [0, classes), the same values on any stream.
Tensor indices_on(const Stream& s, const Shape& shape, int64_t classes, DType dtype, uint64_t seed) {
  std::vector<double> ids = testing::random_values(shape.numel(), DType::i64, seed, 0.0, static_cast<double>(classes));
  for (double& v : ids) v = std::min(v, static_cast<double>(classes - 1));
  return testing::from_doubles(ids, shape, dtype, s);
}

Shape with_classes(const Shape& indices, int64_t classes) {
  std::vector<int64_t> dims = indices.dims();
  dims.push_back(classes);
  return Shape(std::move(dims));
}

class OneHotCuda : public testing::CudaOpTest {};

TEST_F(OneHotCuda, MatchesCpuExactly) {
  struct Case {
    Shape indices;
    int64_t classes;
  };
  // 1, 7, 2^20 + 3 = 149797 * 7 outputs; a rank-3 [n, T, ...] index tensor; one class.
  const Case cases[] = {{Shape{1}, 1}, {Shape{7}, 1}, {Shape{1}, 7}, {Shape{149797}, 7}, {Shape{3, 5, 2}, 33}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    for (DType dtype : kFloatingDTypes) {
      for (DType index_dtype : {DType::i32, DType::i64}) {
        for (bool offset : {false, true}) {
          SCOPED_TRACE(::testing::Message() << c.indices.str() << " classes " << c.classes << " " << dtype_name(dtype)
                                            << " indices " << dtype_name(index_dtype) << " offset " << offset);
          ++seed;
          const Shape out_shape = with_classes(c.indices, c.classes);
          const Tensor ids_c = indices_on(cpu.stream(), c.indices, c.classes, index_dtype, seed);
          const Tensor ids_g = indices_on(gs(), c.indices, c.classes, index_dtype, seed);
          const Tensor out_c = testing::poisoned(out_shape, dtype, cpu.stream());
          const Tensor out_g = testing::poisoned(out_shape, dtype, gs(), offset);
          one_hot(cpu, ids_c, out_c);
          one_hot(*gpu, ids_g, out_g);
          EXPECT_TRUE(
              testing::identical_values(testing::to_doubles(out_g, gs()), testing::to_doubles(out_c, cpu.stream())));
        }
      }
    }
  }
}

TEST_F(OneHotCuda, BadIndicesGiveZeroRowsAndAreReportedAtTheNextSynchronisation) {
  gpu->set_sync_checks(false);
  const Tensor ids = testing::from_doubles({2, 4, 1, -1}, Shape{2, 2}, DType::i64, gs());
  const Tensor out = testing::poisoned(Shape{2, 2, 4}, DType::f32, gs());
  one_hot(*gpu, ids, out);
  EXPECT_EQ(testing::to_doubles(out, gs()), std::vector<double>({0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_ERROR_MENTIONS("one_hot: argument 'indices' has 2 value(s) outside [0, 4), the first is 4 at position 1",
                        raise_deferred_errors(*gpu));
  EXPECT_NO_THROW(raise_deferred_errors(*gpu));

  // With synchronised checks the op itself throws, the same words as on the CPU.
  gpu->set_sync_checks(true);
  const Tensor ids32 = testing::from_doubles({0, 3, 9}, Shape{3}, DType::i32, gs());
  EXPECT_ERROR_MENTIONS("one_hot: argument 'indices' has 1 value(s) outside [0, 4), the first is 9 at position 2",
                        one_hot(*gpu, ids32, Tensor::empty(Shape{3, 4}, DType::f64, *gpu)));
  EXPECT_NO_THROW(raise_deferred_errors(*gpu)) << "a failure reported by its op is reported again";
}

}  // namespace
}  // namespace baton::kernels
