// Gradient buckets: ready order, caps, node boundaries, and buckets as contiguous ranges of a
// ParamStore laid out by the plan.
#include <gtest/gtest.h>

#include "parallel/replicas/bucket_plan.h"
#include "parallel/replicas/gradient_sync.h"
#include "tests/parallel/data_parallel_test_util.h"

namespace baton::parallel {
namespace {

using testing::dp_mlp;

TEST(BucketPlan, ReadyOrderIsBackwardOrderNodeByNode) {
  const Graph g = dp_mlp(DType::f32, 8);
  std::vector<std::string> names;
  for (const ParamEntry& e : backward_ready_order(g, g.topological_order(), DType::f32)) names.push_back(e.name);
  const std::vector<std::string> expected{"head.weight", "head.bias",  "fc2.weight",
                                          "fc2.bias",    "fc1.weight", "fc1.bias"};
  EXPECT_EQ(names, expected);
}

TEST(BucketPlan, SmallFirstBucketThenCapAndNodesNeverSplit) {
  const Graph g = dp_mlp(DType::f32, 8);
  // Padded bytes: head.weight 32 floats = 128, head.bias 16 = 64, fc2.weight 64 = 256, fc2.bias 64,
  // fc1.weight 48 = 192, fc1.bias 64.
  const BucketPlan plan =
      plan_buckets(backward_ready_order(g, g.topological_order(), DType::f32), DType::f32, {100, 300});
  const std::vector<std::vector<std::string>> expected{
      {"head.weight", "head.bias"}, {"fc2.weight", "fc2.bias"}, {"fc1.weight", "fc1.bias"}};
  EXPECT_EQ(plan.buckets, expected);
  const BucketPlan one = plan_buckets(backward_ready_order(g, g.topological_order(), DType::f32), DType::f32);
  ASSERT_EQ(one.buckets.size(), 1u);  // 1 MiB holds the whole model
  EXPECT_EQ(one.buckets[0].size(), 6u);
  EXPECT_THROW(plan_buckets({}, DType::f32, {0, 1}), Error);
}

TEST(BucketPlan, BucketsAreContiguousRangesOfTheLaidOutGradients) {
  const Graph g = dp_mlp(DType::f64, 8);
  const BucketPlan plan =
      plan_buckets(backward_ready_order(g, g.topological_order(), DType::f64), DType::f64, {100, 300});
  Context ctx(Device::cpu());
  ParamStore store(g, g.topological_order(), DType::f64, ctx, plan.layout());
  GradientBuckets buckets(store);
  ASSERT_EQ(buckets.size(), plan.buckets.size());
  int64_t end = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    EXPECT_EQ(buckets.params_in(b), static_cast<int>(plan.buckets[b].size()));
    const Tensor view = buckets.view(b);
    EXPECT_EQ(view.storage(), store.grads_flat().storage());
    for (const std::string& name : plan.buckets[b]) {
      const ParamEntry& e = store.entry(name);
      EXPECT_EQ(buckets.bucket_of(e), b) << name;
      EXPECT_GE(static_cast<const double*>(store.grad(name).data_ptr()), static_cast<const double*>(view.data_ptr()));
    }
    end += view.numel();
  }
  EXPECT_EQ(end, store.grads_flat().numel());  // the buckets cover the flat buffer
}

}  // namespace
}  // namespace baton::parallel
