// Optimisers over a ParamStore: equal to the PyTorch formulas per element, no decay on the
// no-decay group unless asked, state exposed for checkpoints, config errors.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/core/error.h"
#include "runtime/train/optimizer.h"
#include "tests/runtime/graph/host_layers.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

Graph affine_graph() { return testing::host_affine_chain(Shape{2, 3}, {"fc"}); }

struct Fixture {
  Context ctx{Device::cpu()};
  Graph g = affine_graph();
  ParamStore store{g, g.topological_order(), DType::f64, ctx};
  Fixture() {
    store.initialize(ctx, 1);
    for (const ParamEntry& e : store.params()) {
      store.grad(e.name).copy_from(testing::random_tensor(e.shape, DType::f64, ctx.stream(), 5 + e.offset),
                                   ctx.stream());
    }
  }
  std::vector<double> param(const char* name) { return testing::to_doubles(store.param(name), ctx.stream()); }
  std::vector<double> grad(const char* name) { return testing::to_doubles(store.grad(name), ctx.stream()); }
};

TEST(Optimizer, SgdMomentumNesterovWeightDecayPerGroup) {
  Fixture f;
  auto opt = make_optimizer({{"type", "sgd"}, {"momentum", 0.9}, {"nesterov", true}, {"weight_decay", 0.1}}, f.store,
                            f.ctx, "test");
  const std::vector<double> w0 = f.param("fc.weight"), b0 = f.param("fc.bias");
  const std::vector<double> gw = f.grad("fc.weight"), gb = f.grad("fc.bias");
  const double lr = 0.5;
  opt->step(f.ctx, lr);
  opt->step(f.ctx, lr);  // same gradients twice
  EXPECT_EQ(opt->steps(), 2);
  for (size_t i = 0; i < w0.size(); ++i) {
    // Two Nesterov steps with L2 decay on the weight, none on the bias.
    double w = w0[i], buf = 0;
    for (int s = 0; s < 2; ++s) {
      const double g = gw[i] + 0.1 * w;
      buf = s == 0 ? g : 0.9 * buf + g;
      w -= lr * (g + 0.9 * buf);
    }
    EXPECT_NEAR(f.param("fc.weight")[i], w, 1e-12);
    double b = b0[i], bbuf = 0;
    for (int s = 0; s < 2; ++s) {
      bbuf = s == 0 ? gb[i] : 0.9 * bbuf + gb[i];
      b -= lr * (gb[i] + 0.9 * bbuf);
    }
    EXPECT_NEAR(f.param("fc.bias")[i], b, 1e-12);
  }
  ASSERT_EQ(opt->state().size(), 1u);
  EXPECT_EQ(opt->state()[0].first, "momentum");
}

TEST(Optimizer, AdamWDecoupledDecayAndBiasCorrection) {
  Fixture f;
  auto opt =
      make_optimizer({{"type", "adamw"}, {"weight_decay", 0.05}, {"decay_bias_and_bn", true}}, f.store, f.ctx, "test");
  const std::vector<double> w0 = f.param("fc.bias"), g = f.grad("fc.bias");
  opt->step(f.ctx, 0.01);
  for (size_t i = 0; i < w0.size(); ++i) {
    const double m = 0.1 * g[i], v = 0.001 * g[i] * g[i];
    const double expected = w0[i] * (1 - 0.01 * 0.05) - 0.01 / 0.1 * m / (std::sqrt(v) / std::sqrt(0.001) + 1e-8);
    EXPECT_NEAR(f.param("fc.bias")[i], expected, 1e-12);
  }
  EXPECT_EQ(opt->state().size(), 2u);
}

TEST(Optimizer, BadConfigNamesTheField) {
  Fixture f;
  EXPECT_THROW(make_optimizer({{"type", "adam"}}, f.store, f.ctx, "cfg"), Error);
  EXPECT_THROW(make_optimizer({{"type", "sgd"}, {"momentum", -1.0}}, f.store, f.ctx, "cfg"), Error);
  EXPECT_THROW(make_optimizer({{"type", "sgd"}, {"lr", 0.1}}, f.store, f.ctx, "cfg"), Error);
  EXPECT_THROW(make_optimizer({{"type", "adamw"}, {"beta1", 1.0}}, f.store, f.ctx, "cfg"), Error);
  EXPECT_THROW(make_optimizer({{"type", "sgd"}, {"nesterov", true}, {"momentum", 0.0}}, f.store, f.ctx, "cfg"), Error);
}

}  // namespace
}  // namespace baton
