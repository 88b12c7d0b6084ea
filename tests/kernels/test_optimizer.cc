// Optimizer ops on the CPU against scalar float64 loops of the torch.optim formulas, over several
// steps, with every SGD variant (momentum, dampening, Nesterov, L2 and decoupled weight decay) and
// AdamW settings; and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/optimizer.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

constexpr int kSteps = 5;
const Shape kOptimizerShape{3, 5, 7};  // any rank: a flat buffer of 105 elements

// torch.optim.SGD for one element, in double.
void sgd_reference(double& param, double grad, double& buf, const SgdParams& p) {
  double g = grad;
  if (p.weight_decay != 0) {
    if (p.decoupled_weight_decay) {
      param *= 1 - p.lr * p.weight_decay;
    } else {
      g += p.weight_decay * param;
    }
  }
  if (p.momentum != 0) {
    buf = p.first_step ? g : p.momentum * buf + (1 - p.dampening) * g;
    g = p.nesterov ? g + p.momentum * buf : buf;
  }
  param -= p.lr * g;
}

// torch.optim.AdamW for one element, in double.
void adamw_reference(double& param, double grad, double& m, double& v, const AdamWParams& p) {
  param *= 1 - p.lr * p.weight_decay;
  m = p.beta1 * m + (1 - p.beta1) * grad;
  v = p.beta2 * v + (1 - p.beta2) * grad * grad;
  const double m_hat = m / (1 - std::pow(p.beta1, static_cast<double>(p.step)));
  const double v_hat = v / (1 - std::pow(p.beta2, static_cast<double>(p.step)));
  param -= p.lr * m_hat / (std::sqrt(v_hat) + p.eps);
}

// Relative and absolute tolerance after kSteps updates in `dtype`.
double step_tolerance(DType dtype) { return dtype == DType::f64 ? 1e-12 : 2e-6; }

struct SgdCase {
  const char* name;
  SgdParams params;
};

TEST(SgdStep, MatchesTorchSgdOverSeveralSteps) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const SgdCase cases[] = {
      {"plain", {.lr = 0.1}},
      {"momentum", {.lr = 0.05, .momentum = 0.9}},
      {"momentum with dampening", {.lr = 0.05, .momentum = 0.9, .dampening = 0.3}},
      {"nesterov", {.lr = 0.05, .momentum = 0.8, .nesterov = true}},
      {"l2 weight decay", {.lr = 0.05, .momentum = 0.9, .weight_decay = 0.05}},
      {"decoupled weight decay",
       {.lr = 0.05, .momentum = 0.9, .nesterov = true, .weight_decay = 0.1, .decoupled_weight_decay = true}},
      {"weight decay without momentum", {.lr = 0.1, .weight_decay = 0.2}},
  };
  const int64_t n = kOptimizerShape.numel();
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const SgdCase& c : cases) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " " << c.name);
      std::vector<double> param = testing::random_values(n, dtype, 1, -1.0, 1.0);
      std::vector<double> buf(static_cast<size_t>(n), 0.0);
      Tensor params = testing::from_doubles(param, kOptimizerShape, dtype, s);
      Tensor momentum_buf;  // undefined without momentum
      if (c.params.momentum != 0) {
        momentum_buf = Tensor::empty(kOptimizerShape, dtype, ctx);
        testing::poison(momentum_buf, s);  // the first step must not read it
      }
      for (int step = 0; step < kSteps; ++step) {
        const std::vector<double> grad = testing::random_values(n, dtype, 100 + static_cast<uint64_t>(step));
        SgdParams p = c.params;
        p.first_step = step == 0;
        sgd_step(ctx, params, testing::from_doubles(grad, kOptimizerShape, dtype, s), momentum_buf, p);
        for (int64_t i = 0; i < n; ++i) sgd_reference(param[i], grad[i], buf[i], p);
      }
      const double tol = step_tolerance(dtype);
      EXPECT_TRUE(testing::all_close(testing::to_doubles(params, s), param, tol, tol));
      if (momentum_buf.defined()) {
        EXPECT_TRUE(testing::all_close(testing::to_doubles(momentum_buf, s), buf, tol, tol));
      }
    }
  }
}

TEST(AdamWStep, MatchesTorchAdamWOverSeveralSteps) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const AdamWParams cases[] = {
      {.lr = 1e-2, .step = 1},
      {.lr = 3e-2, .beta1 = 0.5, .beta2 = 0.99, .eps = 1e-3, .weight_decay = 0.1, .step = 1},
      {.lr = 1e-2, .weight_decay = 0.0, .step = 1},
      {.lr = 1e-2, .beta1 = 0.0, .step = 1},
  };
  const int64_t n = kOptimizerShape.numel();
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const AdamWParams& config : cases) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " lr " << config.lr << " betas " << config.beta1 << ", "
                                        << config.beta2 << " eps " << config.eps << " wd " << config.weight_decay);
      std::vector<double> param = testing::random_values(n, dtype, 2, -1.0, 1.0);
      std::vector<double> m(static_cast<size_t>(n), 0.0), v(static_cast<size_t>(n), 0.0);
      Tensor params = testing::from_doubles(param, kOptimizerShape, dtype, s);
      Tensor exp_avg = testing::from_doubles(m, kOptimizerShape, dtype, s);
      Tensor exp_avg_sq = testing::from_doubles(v, kOptimizerShape, dtype, s);
      for (int step = 1; step <= kSteps; ++step) {
        const std::vector<double> grad = testing::random_values(n, dtype, 200 + static_cast<uint64_t>(step));
        AdamWParams p = config;
        p.step = step;
        adamw_step(ctx, params, testing::from_doubles(grad, kOptimizerShape, dtype, s), exp_avg, exp_avg_sq, p);
        for (int64_t i = 0; i < n; ++i) adamw_reference(param[i], grad[i], m[i], v[i], p);
      }
      const double tol = step_tolerance(dtype);
      EXPECT_TRUE(testing::all_close(testing::to_doubles(params, s), param, tol, tol));
      EXPECT_TRUE(testing::all_close(testing::to_doubles(exp_avg, s), m, tol, tol));
      EXPECT_TRUE(testing::all_close(testing::to_doubles(exp_avg_sq, s), v, tol, tol));
    }
  }
}

TEST(OptimizerOps, BadInputNamesTheArgument) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  Tensor params = testing::random_tensor(kOptimizerShape, DType::f32, s, 1);
  Tensor grads = testing::random_tensor(kOptimizerShape, DType::f32, s, 2);
  Tensor buf = testing::random_tensor(kOptimizerShape, DType::f32, s, 3);
  Tensor m = testing::random_tensor(kOptimizerShape, DType::f32, s, 4);
  Tensor v = testing::random_tensor(kOptimizerShape, DType::f32, s, 5, 0.0, 1.0);
  const std::vector<double> before = testing::to_doubles(params, s);

  EXPECT_ERROR_MENTIONS("'grads'",
                        sgd_step(ctx, params, testing::random_tensor(Shape{105}, DType::f32, s, 6), buf, {.lr = 1}));
  EXPECT_ERROR_MENTIONS(
      "'grads'", sgd_step(ctx, params, testing::random_tensor(kOptimizerShape, DType::f64, s, 6), buf, {.lr = 1}));
  EXPECT_ERROR_MENTIONS("'params'",
                        sgd_step(ctx, testing::random_tensor(kOptimizerShape, DType::f16, s, 6),
                                 testing::random_tensor(kOptimizerShape, DType::f16, s, 7), Tensor(), {.lr = 1}));
  EXPECT_ERROR_MENTIONS("'momentum_buf'", sgd_step(ctx, params, grads, Tensor(), {.lr = 1, .momentum = 0.9}));
  EXPECT_ERROR_MENTIONS("'momentum_buf'", sgd_step(ctx, params, grads, Tensor::empty(Shape{3}, DType::f32, ctx),
                                                   {.lr = 1, .momentum = 0.9}));
  EXPECT_ERROR_MENTIONS("'lr'", sgd_step(ctx, params, grads, buf, {.lr = -1}));
  EXPECT_ERROR_MENTIONS("'lr'", sgd_step(ctx, params, grads, buf, {.lr = NAN}));
  EXPECT_ERROR_MENTIONS("'momentum'", sgd_step(ctx, params, grads, buf, {.lr = 1, .momentum = -0.5}));
  EXPECT_ERROR_MENTIONS("'weight_decay'", sgd_step(ctx, params, grads, buf, {.lr = 1, .weight_decay = -1}));
  EXPECT_ERROR_MENTIONS("'nesterov'", sgd_step(ctx, params, grads, buf, {.lr = 1, .nesterov = true}));
  EXPECT_ERROR_MENTIONS(
      "'nesterov'", sgd_step(ctx, params, grads, buf, {.lr = 1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}));

  EXPECT_ERROR_MENTIONS("'step'", adamw_step(ctx, params, grads, m, v, {.lr = 1e-3, .step = 0}));
  EXPECT_ERROR_MENTIONS("'lr'", adamw_step(ctx, params, grads, m, v, {.lr = -1e-3, .step = 1}));
  EXPECT_ERROR_MENTIONS("'beta1'", adamw_step(ctx, params, grads, m, v, {.lr = 1e-3, .beta1 = 1.0, .step = 1}));
  EXPECT_ERROR_MENTIONS("'beta2'", adamw_step(ctx, params, grads, m, v, {.lr = 1e-3, .beta2 = -0.1, .step = 1}));
  EXPECT_ERROR_MENTIONS("'eps'", adamw_step(ctx, params, grads, m, v, {.lr = 1e-3, .eps = -1, .step = 1}));
  EXPECT_ERROR_MENTIONS("'weight_decay'",
                        adamw_step(ctx, params, grads, m, v, {.lr = 1e-3, .weight_decay = -1, .step = 1}));
  EXPECT_ERROR_MENTIONS("'exp_avg'",
                        adamw_step(ctx, params, grads, testing::random_tensor(kOptimizerShape, DType::f64, s, 8), v,
                                   {.lr = 1e-3, .step = 1}));
  EXPECT_ERROR_MENTIONS(
      "'exp_avg_sq'",
      adamw_step(ctx, params, grads, m, Tensor::empty(Shape{3, 5, 6}, DType::f32, ctx), {.lr = 1e-3, .step = 1}));
  EXPECT_ERROR_MENTIONS("'exp_avg_sq'", adamw_step(ctx, params, grads, m, Tensor(), {.lr = 1e-3, .step = 1}));
  EXPECT_EQ(testing::to_doubles(params, s), before) << "a rejected step changed the parameters";
}

}  // namespace
}  // namespace baton::kernels
