// distinct_layers: ResNet-50's convolutions, classifier and batch norms merged by config and shape.
#include <gtest/gtest.h>

#include "layers/conv.h"
#include "models/distinct_layers.h"
#include "models/model_registry.h"

namespace baton::models {
namespace {

Graph resnet50(int64_t batch) {
  ModelOptions options = default_options("resnet50");
  options.batch_size = batch;
  options.with_loss = false;
  return build_model("resnet50", options);
}

int total_count(const std::vector<DistinctLayer>& layers) {
  int total = 0;
  for (const DistinctLayer& d : layers) total += d.count;
  return total;
}

TEST(DistinctLayers, ResNet50ConvolutionsInForwardOrder) {
  const std::vector<DistinctLayer> convs = distinct_layers(resnet50(2), "Conv2d");
  EXPECT_EQ(total_count(convs), 53);  // 1 stem + 16 blocks x 3 + 4 downsamples
  ASSERT_GE(convs.size(), 3u);
  EXPECT_EQ(convs[0].name, "conv1");
  EXPECT_EQ(convs[0].input_shape, Shape({2, 3, 224, 224}));
  EXPECT_TRUE(convs[0].input_is_graph_input);
  EXPECT_EQ(convs[0].count, 1);
  EXPECT_EQ(convs[1].name, "layer1.0.conv1");
  EXPECT_FALSE(convs[1].input_is_graph_input);
  // layer1.1.conv2 and layer1.2.conv2 repeat layer1.0.conv2 (3x3, 64 -> 64 at 56).
  EXPECT_EQ(convs[2].name, "layer1.0.conv2");
  EXPECT_EQ(convs[2].count, 3);
  EXPECT_EQ(dynamic_cast<const layers::Conv2d&>(*convs[2].layer).options().kernel_size[0], 3);
}

TEST(DistinctLayers, ResNet50ClassifierAndBatchNorms) {
  const Graph g = resnet50(1);
  const std::vector<DistinctLayer> fc = distinct_layers(g, "Linear");
  ASSERT_EQ(fc.size(), 1u);
  EXPECT_EQ(fc[0].name, "fc");
  EXPECT_EQ(fc[0].input_shape, Shape({1, 2048}));
  const std::vector<DistinctLayer> norms = distinct_layers(g, "BatchNorm2d");
  EXPECT_EQ(total_count(norms), 53);  // one after each convolution
  EXPECT_EQ(norms[0].name, "bn1");
  EXPECT_EQ(norms[0].input_shape, Shape({1, 64, 112, 112}));
  EXPECT_LT(norms.size(), 53u);  // repeated shapes merged
}

TEST(DistinctLayers, UnknownTypeGivesNothing) { EXPECT_TRUE(distinct_layers(resnet50(1), "Conv3d").empty()); }

}  // namespace
}  // namespace baton::models
