// Activation layers on CUDA against the CPU, forward and backward. ReLU and ReLU6 only compare and
// select, so they must match bit for bit (also in f16); Sigmoid and Tanh go through the device's
// exp / tanh and are compared with the default tolerance.
#include <gtest/gtest.h>

#include <memory>

#include "layers/activation.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(ActivationsCuda, MatchCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  const struct {
    std::shared_ptr<const Layer> layer;
    double low, high;
    bool exact;
  } cases[] = {{std::make_shared<ReLU>(), -1, 1, true},
               {std::make_shared<ReLU6>(), -2, 8, true},
               {std::make_shared<Sigmoid>(), -8, 8, false},
               {std::make_shared<Tanh>(), -4, 4, false}};
  for (const auto& c : cases) {
    for (const Shape& shape : {Shape{1}, Shape{1023}, Shape{8, 16, 13, 13}}) {
      for (DType dtype : {DType::f32, DType::f16}) {
        if (dtype == DType::f16 && !c.exact) continue;
        const Tensor x = testing::random_tensor(shape, dtype, s, 5, c.low, c.high);
        const testing::DeviceCheckOptions options =
            c.exact ? testing::DeviceCheckOptions{.rtol = 0, .atol = 0} : testing::DeviceCheckOptions{};
        EXPECT_TRUE(testing::check_cuda_matches_cpu(*c.layer, {x}, options))
            << c.layer->type() << " " << shape.str() << " " << dtype_name(dtype);
      }
    }
  }
}

}  // namespace
}  // namespace baton::layers
