// The gradient checker itself: it passes a correct layer and catches wrong input and parameter
// gradients (so a passing layer test means something).
#include <gtest/gtest.h>

#include "kernels/elementwise.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

// y = w * x * x with a parameter w of x's shape; `bug` selects a wrong gradient.
class SquareScale final : public Layer {
 public:
  enum class Bug { none, input_grad, param_grad };
  explicit SquareScale(Bug bug) : bug_(bug) {}
  std::string_view type() const override { return "SquareScale"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> in) const override { return {in[0]}; }
  std::vector<TensorSpec> param_specs(std::span<const Shape> in) const override {
    return {{"weight", in[0], Initializer::constant(1)}};
  }
  ForwardResult forward(const ForwardArgs& a) const override {
    const Tensor& x = a.inputs[0];
    Tensor x2 = Tensor::empty(x.shape(), x.dtype(), a.ctx), y = Tensor::empty(x.shape(), x.dtype(), a.ctx);
    kernels::mul(a.ctx, x, x, x2);
    kernels::mul(a.ctx, a.params[0], x2, y);
    return {{y}, {x, x2}};
  }
  std::vector<Tensor> backward(const BackwardArgs& a) const override {
    const Tensor &x = a.saved[0], &x2 = a.saved[1], &dy = a.output_grads[0];
    Tensor t = Tensor::empty(x.shape(), x.dtype(), a.ctx), dx = Tensor::empty(x.shape(), x.dtype(), a.ctx);
    kernels::mul(a.ctx, dy, bug_ == Bug::param_grad ? x : x2, t);
    kernels::axpy(a.ctx, 1.0, t, a.param_grads[0]);  // dw += dy * x^2
    kernels::mul(a.ctx, dy, a.params[0], t);
    kernels::mul(a.ctx, t, x, dx);
    kernels::scale(a.ctx, dx, bug_ == Bug::input_grad ? 1.0 : 2.0, dx);  // dx = 2 w x dy
    return {dx};
  }

 private:
  Bug bug_;
};

TEST(GradientChecker, PassesACorrectLayerAndCatchesWrongGradients) {
  const Stream s = Stream::create(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{3, 4}, DType::f64, s, 9);
  EXPECT_TRUE(testing::check_gradients(SquareScale(SquareScale::Bug::none), {x}));
  EXPECT_FALSE(testing::check_gradients(SquareScale(SquareScale::Bug::input_grad), {x}));
  EXPECT_FALSE(testing::check_gradients(SquareScale(SquareScale::Bug::param_grad), {x}));
}

}  // namespace
}  // namespace baton
