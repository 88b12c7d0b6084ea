// Dropout ops on CUDA against the CPU: the same mask and the same bits for every floating dtype,
// sizes 1, 7, 1023 and 2^20 + 3, several seeds and drop probabilities, inputs or outputs off the
// kernel's vector alignment (the scalar path), in-place use and backward. Skipped without a GPU.
// The small sizes run in every (p, seed, dtype) combination and take the vector path and its scalar tail; the
// 2^20 + 3 size (many blocks) runs for every p and seed in one dtype, the next one at each
// (p, seed), so each dtype meets the large size three times.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <vector>

#include "kernels/dropout.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;
using testing::kFloatingDTypes;

constexpr int64_t kDropoutLargeSize = (int64_t{1} << 20) + 3;
constexpr int64_t kDropoutCudaSizes[] = {1, 7, 1023, kDropoutLargeSize};
constexpr uint64_t kSeeds[] = {0, 0x5eed'0000'1234'abcdull, ~uint64_t{0}};

class DropoutCuda : public testing::CudaOpTest {};

TEST_F(DropoutCuda, SameBitsAsTheCpu) {
  size_t large_dtype = 0;  // the index in kFloatingDTypes of the dtype that runs the large size next
  for (double p : {0.0, 0.1, 0.5, 0.9}) {
    for (uint64_t seed : kSeeds) {
      const DType large_size_dtype = kFloatingDTypes[large_dtype++ % std::size(kFloatingDTypes)];
      for (DType dtype : kFloatingDTypes) {
        for (int64_t n : kDropoutCudaSizes) {
          if (n == kDropoutLargeSize && dtype != large_size_dtype) continue;
          for (bool offset : {false, true}) {
            SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << ", n = " << n << ", p = " << p << ", seed "
                                              << seed << (offset ? ", one element off alignment" : ""));
            const Tensor x = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 61);
            const Tensor expected = Tensor::empty(Shape{n}, dtype, cpu);
            dropout_forward(cpu, x, p, seed, expected);
            const std::vector<unsigned char> bytes = testing::bytes_of(expected, cpu.stream());

            const Tensor gx = copy_to(x, gs(), offset);
            const Tensor out =
                testing::poisoned(Shape{n}, dtype, gs(), !offset);  // input and output misaligned in turn
            dropout_forward(*gpu, gx, p, seed, out);
            EXPECT_EQ(testing::bytes_of(out, gs()), bytes) << "forward";
            const Tensor dx = testing::poisoned(Shape{n}, dtype, gs(), offset);
            dropout_backward(*gpu, gx, p, seed, dx);
            EXPECT_EQ(testing::bytes_of(dx, gs()), bytes) << "backward (dy = x)";
            dropout_forward(*gpu, gx, p, seed, gx);
            EXPECT_EQ(testing::bytes_of(gx, gs()), bytes) << "in place";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::kernels
