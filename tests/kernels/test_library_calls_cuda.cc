// The bare library calls (matmul_library_call, conv2d_library_call, batch_norm_library_call) of a
// context on cuda:1, called from a thread that has cuda:0 current: each call must run on its
// context's device (the handles belong to it), as `baton bench layers --device cuda:1` needs.
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <memory>
#include <thread>

#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/gemm.h"
#include "runtime/core/context.h"
#include "runtime/core/device.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;

class LibraryCallsOnSecondGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
    gpu1 = std::make_unique<Context>(Device::cuda(1));
  }

  const Stream& gs() const { return gpu1->stream(); }

  // Runs `call` on a new thread, where no device was made current (CUDA's default: device 0).
  static void call_from_another_thread(const std::function<void()>& call) {
    std::exception_ptr error;
    std::thread worker([&] {
      try {
        call();
      } catch (...) {
        error = std::current_exception();
      }
    });
    worker.join();
    if (error) std::rethrow_exception(error);
  }

  Context cpu{Device::cpu()};
  std::unique_ptr<Context> gpu1;
};

TEST_F(LibraryCallsOnSecondGpu, MatmulRunsOnItsContextsDevice) {
  const Tensor a = copy_to(testing::random_tensor(Shape{9, 5}, DType::f32, cpu.stream(), 1), gs());
  const Tensor b = copy_to(testing::random_tensor(Shape{5, 7}, DType::f32, cpu.stream(), 2), gs());
  const Tensor via_op = testing::poisoned(Shape{9, 7}, DType::f32, gs());
  const Tensor via_call = testing::poisoned(Shape{9, 7}, DType::f32, gs());
  matmul(*gpu1, a, b, via_op, false, false);
  const std::function<void()> call = matmul_library_call(*gpu1, a, b, via_call, false, false);
  ASSERT_TRUE(call);
  call_from_another_thread(call);
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(via_call, gs()), testing::to_doubles(via_op, gs())));
}

TEST_F(LibraryCallsOnSecondGpu, ConvolutionRunsOnItsContextsDevice) {
  const Conv2dParams p{.padding = {1, 1}};
  const Shape xs{2, 3, 6, 6}, ws{4, 3, 3, 3}, ys = conv2d_output_shape(xs, ws, p);
  const Tensor x = copy_to(testing::random_tensor(xs, DType::f32, cpu.stream(), 3), gs());
  const Tensor w = copy_to(testing::random_tensor(ws, DType::f32, cpu.stream(), 4), gs());
  const Tensor y_op = testing::poisoned(ys, DType::f32, gs()), y_call = testing::poisoned(ys, DType::f32, gs());
  conv2d_forward(*gpu1, x, w, Tensor(), p, y_op);
  const std::function<void()> call = conv2d_library_call(*gpu1, Conv2dPass::forward, x, w, y_call, p);
  ASSERT_TRUE(call);
  call_from_another_thread(call);
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(y_call, gs()), testing::to_doubles(y_op, gs())));
}

TEST_F(LibraryCallsOnSecondGpu, BatchNormRunsOnItsContextsDevice) {
  const Shape s{4, 3, 5, 5}, c{3};
  const auto on_gpu1 = [&](const Shape& shape, uint64_t seed) {
    return copy_to(testing::random_tensor(shape, DType::f32, cpu.stream(), seed), gs());
  };
  const BatchNormTensors t{.x = on_gpu1(s, 5),
                           .weight = on_gpu1(c, 6),
                           .bias = on_gpu1(c, 7),
                           .y = testing::poisoned(s, DType::f32, gs()),
                           .save_mean = testing::poisoned(c, DType::f32, gs()),
                           .save_invstd = testing::poisoned(c, DType::f32, gs())};
  const Tensor y_op = testing::poisoned(s, DType::f32, gs());
  batch_norm_forward_train(*gpu1, t.x, t.weight, t.bias, 1e-5, 0.1, y_op, testing::poisoned(c, DType::f32, gs()),
                           testing::poisoned(c, DType::f32, gs()), Tensor(), Tensor(), Tensor());
  const std::function<void()> call = batch_norm_library_call(*gpu1, BatchNormPass::forward_train, t, 1e-5, 0.1);
  ASSERT_TRUE(call);
  call_from_another_thread(call);
  EXPECT_TRUE(testing::identical_values(testing::to_doubles(t.y, gs()), testing::to_doubles(y_op, gs())));
}

}  // namespace
}  // namespace baton::kernels
