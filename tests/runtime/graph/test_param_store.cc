// ParamStore: names, layout (decay group first, 64-byte aligned views), initialisation.
#include <gtest/gtest.h>

#include "runtime/graph/param_store.h"
#include "tests/runtime/graph/host_layers.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

Graph two_affines() { return testing::host_affine_chain(Shape{2, 5}, {"block.0", "block.1"}); }

TEST(ParamStore, NamesLayoutAndViews) {
  Context ctx(Device::cpu());
  const Graph g = two_affines();
  ParamStore store(g, g.topological_order(), DType::f32, ctx);
  ASSERT_EQ(store.params().size(), 4u);
  EXPECT_EQ(store.params()[0].name, "block.0.weight");
  EXPECT_EQ(store.params()[1].name, "block.1.weight");
  EXPECT_EQ(store.params()[2].name, "block.0.bias");  // no-decay group after the decay group
  EXPECT_EQ(store.num_parameters(), 20);
  ASSERT_EQ(store.segments().size(), 2u);  // two weights of 5 floats, each padded to 16, then two biases
  EXPECT_EQ(store.segments()[0].end, 32);
  EXPECT_TRUE(store.segments()[0].weight_decay);
  EXPECT_EQ(store.segments()[1].begin, 32);
  EXPECT_EQ(store.segments()[1].end, 64);
  for (const ParamEntry& e : store.params()) {
    EXPECT_EQ(e.offset % 16, 0) << e.name;
    const Tensor p = store.param(e.name);
    EXPECT_EQ(p.shape(), Shape{5});
    EXPECT_EQ(p.storage(), store.params_flat().storage());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data_ptr()) % 64, 0u);
  }
  EXPECT_EQ(store.node_params(g.node_id("block.1"))[0].data_ptr(), store.param("block.1.weight").data_ptr());
  EXPECT_EQ(store.node_grads(g.node_id("block.1"))[1].data_ptr(), store.grad("block.1.bias").data_ptr());
  EXPECT_TRUE(store.node_params(g.node_id("loss")).empty());
  EXPECT_THROW(store.param("block.2.weight"), Error);
}

TEST(ParamStore, InitialisationIsDeterministicBoundedAndKeepsPaddingZero) {
  Context ctx(Device::cpu());
  const Graph g = two_affines();
  ParamStore a(g, g.topological_order(), DType::f32, ctx), b(g, g.topological_order(), DType::f32, ctx),
      c(g, g.topological_order(), DType::f32, ctx);
  a.initialize(ctx, 42);
  b.initialize(ctx, 42);
  c.initialize(ctx, 43);
  const std::vector<double> va = testing::to_doubles(a.params_flat(), ctx.stream());
  EXPECT_EQ(va, testing::to_doubles(b.params_flat(), ctx.stream()));
  EXPECT_NE(va, testing::to_doubles(c.params_flat(), ctx.stream()));
  for (const ParamEntry& e : a.params()) {
    for (double v : testing::to_doubles(a.param(e.name), ctx.stream())) {
      EXPECT_GE(v, e.init.a) << e.name;
      EXPECT_LE(v, e.init.b) << e.name;
    }
    // Padding after the parameter is zero.
    for (int64_t i = e.offset + e.shape.numel(); i < e.offset + 16; ++i) EXPECT_EQ(va[static_cast<size_t>(i)], 0.0);
  }
}

TEST(ParamStore, UnsupportedDtypeIsAnError) {
  Context ctx(Device::cpu());
  const Graph g = two_affines();
  EXPECT_THROW(ParamStore(g, g.topological_order(), DType::f16, ctx), Error);
}

TEST(ParamStore, BlockLayoutKeepsNamesAndInitialValuesAndSegmentsTheDecay) {
  Context ctx(Device::cpu());
  const Graph g = two_affines();
  ParamStore flat(g, g.topological_order(), DType::f64, ctx);
  const ParamLayout layout{{{"block.1.bias", "block.1.weight"}, {"block.0.weight", "block.0.bias"}}};
  ParamStore blocks(g, g.topological_order(), DType::f64, ctx, layout);
  // Block by block, each block's weight-decay parameters first.
  ASSERT_EQ(blocks.params().size(), 4u);
  EXPECT_EQ(blocks.params()[0].name, "block.1.weight");
  EXPECT_EQ(blocks.params()[1].name, "block.1.bias");
  EXPECT_EQ(blocks.params()[2].name, "block.0.weight");
  EXPECT_EQ(blocks.params()[3].name, "block.0.bias");
  const std::vector<std::pair<int64_t, int64_t>> ranges{{0, 16}, {16, 32}};  // 8 f64 per 64 bytes
  EXPECT_EQ(blocks.block_ranges(), ranges);
  ASSERT_EQ(blocks.segments().size(), 4u);
  EXPECT_EQ(blocks.segments()[1].begin, 8);
  EXPECT_FALSE(blocks.segments()[1].weight_decay);
  EXPECT_EQ(blocks.segments()[3].end, 32);
  flat.initialize(ctx, 7);
  blocks.initialize(ctx, 7);
  for (const ParamEntry& e : flat.params()) {
    EXPECT_EQ(testing::to_doubles(flat.param(e.name), ctx.stream()),
              testing::to_doubles(blocks.param(e.name), ctx.stream()))
        << e.name;
  }
}

TEST(ParamStore, BlockLayoutErrorsNameTheParameter) {
  Context ctx(Device::cpu());
  const Graph g = two_affines();
  auto message = [&](const ParamLayout& layout) {
    try {
      ParamStore(g, g.topological_order(), DType::f32, ctx, layout);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{{"block.0.weight", "block.0.bias", "block.1.weight"}}}).find("'block.1.bias' is in no block"),
            std::string::npos);
  EXPECT_NE(message({{{"block.0.weight", "block.0.bias"}, {"block.0.bias"}}}).find("more than one block"),
            std::string::npos);
  EXPECT_NE(message({{{"block.9.weight"}}}).find("'block.9.weight', which is not a parameter"), std::string::npos);
}

}  // namespace
}  // namespace baton
