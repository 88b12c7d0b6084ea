// cuDNN descriptors are made once per problem and cached (with the convolution algorithm; per
// shape for batch norm): repeating the calls of a known problem creates none. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/cuda/cudnn_descriptor_count.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using cuda::cudnn_descriptors_created;
using testing::copy_to;

class CudnnDescriptorCache : public testing::CudaOpTest {
 protected:
  Tensor random_on_gpu(const Shape& shape, uint64_t seed, double low = -1.0) {
    return copy_to(testing::random_tensor(shape, DType::f32, cpu.stream(), seed, low), gs());
  }
};

TEST_F(CudnnDescriptorCache, RepeatedConvolutionsCreateNone) {
  const Conv2dParams p{.stride = {2, 1}, .padding = {1, 1}};
  const Shape xs{2, 3, 9, 7}, ws{4, 3, 3, 3}, ys = conv2d_output_shape(xs, ws, p);
  const Tensor x = random_on_gpu(xs, 1), w = random_on_gpu(ws, 2), dy = random_on_gpu(ys, 3), dw = random_on_gpu(ws, 4);
  const Tensor y = testing::poisoned(ys, DType::f32, gs()), dx = testing::poisoned(xs, DType::f32, gs());
  const auto all_passes = [&] {
    conv2d_forward(*gpu, x, w, Tensor(), p, y);
    conv2d_backward_data(*gpu, dy, w, p, dx);
    conv2d_backward_filter(*gpu, x, dy, p, dw);
  };
  all_passes();  // measures the algorithms and makes the descriptors
  const int64_t created = cudnn_descriptors_created();
  for (int repeat = 0; repeat < 3; ++repeat) all_passes();
  EXPECT_EQ(cudnn_descriptors_created() - created, 0);
  // A bare library call of the known problem reuses them too.
  const auto call = conv2d_library_call(*gpu, Conv2dPass::forward, x, w, y, p);
  EXPECT_EQ(cudnn_descriptors_created() - created, 0);
  ASSERT_TRUE(call);
}

TEST_F(CudnnDescriptorCache, RepeatedBatchNormsCreateNone) {
  const Shape s{4, 5, 3, 6}, c{5};
  const Tensor x = random_on_gpu(s, 5), dy = random_on_gpu(s, 6), w = random_on_gpu(c, 7), b = random_on_gpu(c, 8);
  const Tensor mean = random_on_gpu(c, 9), var = random_on_gpu(c, 10, 0.5);
  const Tensor y = testing::poisoned(s, DType::f32, gs()), dx = testing::poisoned(s, DType::f32, gs());
  const Tensor save_mean = testing::poisoned(c, DType::f32, gs()), save_invstd = testing::poisoned(c, DType::f32, gs());
  const Tensor wg = random_on_gpu(c, 11), bg = random_on_gpu(c, 12);
  const auto all_passes = [&] {
    batch_norm_forward_train(*gpu, x, w, b, 1e-5, 0.1, y, save_mean, save_invstd, Tensor(), Tensor(), Tensor());
    batch_norm_backward_train(*gpu, x, dy, w, save_mean, save_invstd, 1e-5, dx, wg, bg);
    batch_norm_forward_eval(*gpu, x, w, b, mean, var, 1e-5, y);
  };
  all_passes();
  const int64_t created = cudnn_descriptors_created();
  for (int repeat = 0; repeat < 3; ++repeat) all_passes();
  EXPECT_EQ(cudnn_descriptors_created() - created, 0);
}

}  // namespace
}  // namespace baton::kernels
