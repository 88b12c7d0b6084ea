// The reference models against torchvision: parameter counts, parameter and buffer names (the
// state_dict keys), output shapes and the order of outputs, initialisers, MACs; option errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "models/model_registry.h"
#include "models/model_summary.h"
#include "tests/support/test_support.h"

namespace baton::models {
namespace {

int64_t parameter_count(const std::string& name) { return summarize(build_model(name, default_options(name))).params; }

std::map<std::string, Shape> by_name(const std::vector<NamedShape>& list) {
  std::map<std::string, Shape> out;
  for (const NamedShape& s : list) out.emplace(s.name, s.shape);
  return out;
}

// The initialiser of parameter `param` ("weight") of node `node`.
Initializer init_of(const Graph& g, const std::string& node, const std::string& param) {
  const Node& n = g.node(g.node_id(node));
  std::vector<Shape> shapes;
  for (ValueId v : n.inputs) shapes.push_back(g.value(v).shape);
  for (const TensorSpec& s : n.layer->param_specs(shapes)) {
    if (s.name == param) return s.init;
  }
  ADD_FAILURE() << node << " has no parameter " << param;
  return {};
}

TEST(Models, ParameterCountsEqualTorchvisions) {
  // torchvision's published counts (sum of p.numel() over model.parameters(), 1000 classes).
  const std::pair<const char*, int64_t> expected[] = {
      {"resnet18", 11'689'512},  {"resnet34", 21'797'672}, {"resnet50", 25'557'032},    {"resnet101", 44'549'160},
      {"resnet152", 60'192'808}, {"vgg11", 132'863'336},   {"vgg11_bn", 132'868'840},   {"vgg13", 133'047'848},
      {"vgg13_bn", 133'053'736}, {"vgg16", 138'357'544},   {"vgg16_bn", 138'365'992},   {"vgg19", 143'667'240},
      {"vgg19_bn", 143'678'248}, {"alexnet", 61'100'840},  {"mobilenet_v2", 3'504'872},
  };
  for (const auto& [name, count] : expected) EXPECT_EQ(parameter_count(name), count) << name;
}

TEST(Models, CifarResNetCountsWithOptionBShortcuts) {
  // He et al. report 0.27M, 0.46M, 0.66M, 0.85M and 1.7M with option A (parameter-free, zero-padded
  // shortcuts). baton's option B shortcuts add a 1x1 conv and a batch norm at the two stage changes:
  // 16·32 + 2·32 + 32·64 + 2·64 = 2,752 parameters more than those exact option A counts
  // (269,722; 464,154; 658,586; 853,018; 1,727,962).
  const std::pair<const char*, int64_t> expected[] = {
      {"resnet20", 272'474}, {"resnet32", 466'906},    {"resnet44", 661'338},
      {"resnet56", 855'770}, {"resnet110", 1'730'714},
  };
  for (const auto& [name, count] : expected) EXPECT_EQ(parameter_count(name), count) << name;
}

TEST(Models, ParameterNamesAreTorchvisionStateDictKeys) {
  const std::map<std::string, std::map<std::string, Shape>> expected = {
      {"resnet18",
       {{"conv1.weight", Shape{64, 3, 7, 7}},
        {"bn1.weight", Shape{64}},
        {"layer1.0.conv1.weight", Shape{64, 64, 3, 3}},
        {"layer2.0.downsample.0.weight", Shape{128, 64, 1, 1}},
        {"layer4.1.bn2.bias", Shape{512}},
        {"fc.weight", Shape{1000, 512}},
        {"fc.bias", Shape{1000}}}},
      {"resnet50",
       {{"layer1.0.downsample.0.weight", Shape{256, 64, 1, 1}},
        {"layer1.0.conv2.weight", Shape{64, 64, 3, 3}},
        {"layer3.5.conv3.weight", Shape{1024, 256, 1, 1}},
        {"layer4.2.conv3.weight", Shape{2048, 512, 1, 1}},
        {"fc.weight", Shape{1000, 2048}}}},
      {"vgg16",
       {{"features.0.weight", Shape{64, 3, 3, 3}},
        {"features.0.bias", Shape{64}},
        {"features.28.weight", Shape{512, 512, 3, 3}},
        {"classifier.0.weight", Shape{4096, 25088}},
        {"classifier.3.weight", Shape{4096, 4096}},
        {"classifier.6.bias", Shape{1000}}}},
      {"vgg16_bn",
       {{"features.1.weight", Shape{64}},
        {"features.40.weight", Shape{512, 512, 3, 3}},
        {"features.41.bias", Shape{512}}}},
      {"alexnet",
       {{"features.0.weight", Shape{64, 3, 11, 11}},
        {"features.10.weight", Shape{256, 256, 3, 3}},
        {"classifier.1.weight", Shape{4096, 9216}},
        {"classifier.6.weight", Shape{1000, 4096}}}},
      {"mobilenet_v2",
       {{"features.0.0.weight", Shape{32, 3, 3, 3}},
        {"features.0.1.weight", Shape{32}},
        {"features.1.conv.0.0.weight", Shape{32, 1, 3, 3}},
        {"features.1.conv.1.weight", Shape{16, 32, 1, 1}},
        {"features.1.conv.2.bias", Shape{16}},
        {"features.2.conv.0.0.weight", Shape{96, 16, 1, 1}},
        {"features.2.conv.1.0.weight", Shape{96, 1, 3, 3}},
        {"features.2.conv.2.weight", Shape{24, 96, 1, 1}},
        {"features.17.conv.2.weight", Shape{320, 960, 1, 1}},
        {"features.18.0.weight", Shape{1280, 320, 1, 1}},
        {"classifier.1.weight", Shape{1000, 1280}}}},
      {"resnet20",
       {{"conv1.weight", Shape{16, 3, 3, 3}},
        {"layer2.0.downsample.0.weight", Shape{32, 16, 1, 1}},
        {"layer3.2.conv2.weight", Shape{64, 64, 3, 3}},
        {"fc.weight", Shape{10, 64}}}},
      {"mlp_autoencoder",
       {{"encoder.0.weight", Shape{512, 3072}},
        {"encoder.4.weight", Shape{32, 128}},
        {"decoder.4.weight", Shape{3072, 512}},
        {"decoder.4.bias", Shape{3072}}}},
  };
  for (const auto& [model, params] : expected) {
    const std::map<std::string, Shape> actual = by_name(parameter_shapes(build_model(model, default_options(model))));
    for (const auto& [name, shape] : params) {
      const auto it = actual.find(name);
      ASSERT_NE(it, actual.end()) << model << " has no parameter " << name;
      EXPECT_EQ(it->second, shape) << model << " " << name;
    }
  }
  const Graph resnet18 = build_model("resnet18", default_options("resnet18"));
  const std::map<std::string, Shape> buffers = by_name(buffer_shapes(resnet18));
  EXPECT_EQ(buffers.at("layer2.0.downsample.1.running_mean"), Shape{128});
  EXPECT_EQ(buffers.at("bn1.num_batches_tracked"), Shape{});
  EXPECT_EQ(by_name(parameter_shapes(resnet18)).count("layer1.0.downsample.0.weight"), 0u);  // no shortcut conv
  // torchvision's state_dict lengths: 62 + 60 = 122 keys for resnet18, 161 + 159 = 320 for resnet50.
  EXPECT_EQ(parameter_shapes(resnet18).size() + buffer_shapes(resnet18).size(), 122u);
  const Graph resnet50 = build_model("resnet50", default_options("resnet50"));
  EXPECT_EQ(parameter_shapes(resnet50).size() + buffer_shapes(resnet50).size(), 320u);
  EXPECT_EQ(by_name(buffer_shapes(build_model("mobilenet_v2", default_options("mobilenet_v2"))))
                .at("features.2.conv.3.running_var"),
            Shape{24});
}

TEST(Models, InputsAndOutputsFollowTheRegistryContract) {
  for (const ModelInfo& info : list_models()) {
    if (info.task == Task::per_position) continue;  // the image models' contract; token-mlp: test_token_mlp.cc
    SCOPED_TRACE(info.name);
    ModelOptions o = default_options(info.name);
    o.batch_size = 3;
    o.num_classes = 7;
    const Graph g = build_model(info.name, o);
    const Shape x{3, 3, info.default_image_size, info.default_image_size};
    const Shape prediction = info.task == Task::classification
                                 ? Shape{3, 7}
                                 : Shape{3, 3 * info.default_image_size * info.default_image_size};
    ASSERT_EQ(g.outputs().size(), 2u);
    EXPECT_EQ(g.value(g.outputs()[0]).name, "loss");
    EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape{});
    EXPECT_EQ(g.value(g.outputs()[1]).shape, prediction);
    EXPECT_EQ(g.value(g.value_id("x")).shape, x);
    EXPECT_EQ(g.inputs().size(), info.task == Task::classification ? 2u : 1u);
    if (info.task == Task::classification) {
      EXPECT_EQ(g.value(g.value_id("labels")).shape, Shape{3});
      EXPECT_EQ(g.value(g.value_id("labels")).dtype, DType::i64);
    }

    o.with_loss = false;
    const Graph inference = build_model(info.name, o);
    ASSERT_EQ(inference.outputs().size(), 1u);
    EXPECT_EQ(inference.value(inference.outputs()[0]).shape, prediction);
    EXPECT_EQ(inference.inputs().size(), 1u);
    EXPECT_FALSE(inference.has_value("labels"));
  }
}

TEST(Models, OtherInputSizesAndChannels) {
  ModelOptions o = default_options("resnet18");
  o.image_size = 64;
  o.in_channels = 1;
  o.num_classes = 5;
  const Graph g = build_model("resnet18", o);
  EXPECT_EQ(g.value(g.value_id("layer4.1.relu2")).shape, (Shape{1, 512, 2, 2}));
  EXPECT_EQ(by_name(parameter_shapes(g)).at("conv1.weight"), (Shape{64, 1, 7, 7}));
  // VGG at 32x32: the features end at 1x1 and the 7x7 adaptive pool repeats it, as in torchvision.
  o.image_size = 32;
  o.in_channels = 3;
  const Graph vgg = build_model("vgg11", o);
  EXPECT_EQ(vgg.value(vgg.value_id("features.20")).shape, (Shape{1, 512, 1, 1}));
  EXPECT_EQ(vgg.value(vgg.value_id("avgpool")).shape, (Shape{1, 512, 7, 7}));
  EXPECT_EQ(summarize(vgg).params, parameter_count("vgg11") - 995 * 4097);  // 5 classes instead of 1000
}

TEST(Models, InitialisersFollowTorchvision) {
  const Graph resnet = build_model("resnet50", default_options("resnet50"));
  EXPECT_EQ(init_of(resnet, "conv1", "weight"), Initializer::normal(0, std::sqrt(2.0 / (64 * 49))));
  EXPECT_EQ(init_of(resnet, "layer1.0.conv3", "weight"), Initializer::normal(0, std::sqrt(2.0 / 256)));
  EXPECT_EQ(init_of(resnet, "bn1", "weight"), Initializer::constant(1));
  EXPECT_EQ(init_of(resnet, "bn1", "bias"), Initializer::constant(0));
  const double fc_bound = 1 / std::sqrt(2048.0);  // nn.Linear's default
  EXPECT_EQ(init_of(resnet, "fc", "weight"), Initializer::uniform(-fc_bound, fc_bound));

  const Graph vgg = build_model("vgg11_bn", default_options("vgg11_bn"));
  EXPECT_EQ(init_of(vgg, "features.0", "weight"), Initializer::normal(0, std::sqrt(2.0 / (64 * 9))));
  EXPECT_EQ(init_of(vgg, "features.0", "bias"), Initializer::constant(0));
  EXPECT_EQ(init_of(vgg, "classifier.6", "weight"), Initializer::normal(0, 0.01));
  EXPECT_EQ(init_of(vgg, "classifier.6", "bias"), Initializer::constant(0));

  const Graph mobilenet = build_model("mobilenet_v2", default_options("mobilenet_v2"));
  // Depthwise: fan_out = out_channels · kh · kw, not divided by groups (PyTorch's rule).
  EXPECT_EQ(init_of(mobilenet, "features.2.conv.1.0", "weight"), Initializer::normal(0, std::sqrt(2.0 / (96 * 9))));
  EXPECT_EQ(init_of(mobilenet, "classifier.1", "weight"), Initializer::normal(0, 0.01));

  const Graph alexnet = build_model("alexnet", default_options("alexnet"));
  const double alex_bound = 1 / std::sqrt(3.0 * 121);
  EXPECT_EQ(init_of(alexnet, "features.0", "weight"), Initializer::uniform(-alex_bound, alex_bound));
}

TEST(Models, MacsMatchPublishedFigures) {
  // torchvision's documented GFLOPS (multiply-accumulates of the convolutions and linear layers)
  // at 224x224, batch 1.
  const std::pair<const char*, double> expected[] = {{"resnet50", 4.09e9}, {"vgg16", 15.47e9}, {"alexnet", 0.71e9}};
  for (const auto& [name, macs] : expected) {
    const double actual = summarize(build_model(name, default_options(name))).macs;
    EXPECT_NEAR(actual, macs, 0.01 * macs) << name << ": " << actual;
  }
  // MACs grow linearly with the batch.
  ModelOptions o = default_options("resnet18");
  const double one = summarize(build_model("resnet18", o)).macs;
  o.batch_size = 4;
  EXPECT_DOUBLE_EQ(summarize(build_model("resnet18", o)).macs, 4 * one);
}

TEST(Models, SummaryJsonHasTheTotalsAndEveryNode) {
  const Graph g = build_model("resnet20", default_options("resnet20"));
  const GraphSummary s = summarize(g);
  const nlohmann::json j = summary_json(s);
  EXPECT_EQ(j["params"], 272'474);
  ASSERT_EQ(j["nodes"].size(), static_cast<size_t>(g.num_nodes()));
  EXPECT_EQ(j["nodes"][0]["name"], "conv1");
  EXPECT_EQ(j["nodes"][0]["type"], "Conv2d");
  EXPECT_EQ(j["nodes"][0]["output_shape"], nlohmann::json({1, 16, 32, 32}));
  EXPECT_EQ(j["nodes"][0]["params"], 432);
  EXPECT_EQ(j["nodes"][0]["macs"], 432 * 32 * 32);
  EXPECT_EQ(j["nodes"][0]["activation_bytes"], 16 * 32 * 32 * 4);
  int64_t params = 0, macs = 0;
  for (const nlohmann::json& n : j["nodes"]) {
    params += n["params"].get<int64_t>();
    macs += n["macs"].get<int64_t>();
  }
  EXPECT_EQ(params, j["params"].get<int64_t>());
  EXPECT_EQ(macs, j["macs"].get<int64_t>());
  EXPECT_EQ(j["nodes"].back()["name"], "loss");
}

TEST(Models, CountsBeyond64BitsAreNeverNegative) {
  EXPECT_EQ(whole_macs(432.4), 432);
  EXPECT_EQ(whole_macs(0x1p62), int64_t{1} << 62);
  EXPECT_EQ(whole_macs(0x1p63), std::nullopt);
  const GraphSummary huge{{}, 1, 2e19, 1};
  EXPECT_DOUBLE_EQ(summary_json(huge)["macs"].get<double>(), 2e19);
  ModelOptions o = default_options("resnet18");
  o.batch_size = int64_t{1} << 50;  // activations of 2^50 images: more than 2^63 bytes
  EXPECT_ERROR_MENTIONS("more than 2^63", summarize(build_model("resnet18", o)));
}

TEST(Models, BadNamesAndOptionsAreClearErrors) {
  EXPECT_ERROR_MENTIONS("unknown model 'resnet19'; the models are: resnet18, resnet34",
                        build_model("resnet19", ModelOptions{}));
  EXPECT_ERROR_MENTIONS("mobilenet_v2, resnet20", model_info("nope"));
  ModelOptions o = default_options("resnet18");
  o.batch_size = 0;
  EXPECT_ERROR_MENTIONS("build_model(\"resnet18\"): option batch_size is 0, expected at least 1",
                        build_model("resnet18", o));
  o = default_options("vgg11");
  o.num_classes = -3;
  EXPECT_ERROR_MENTIONS("option num_classes is -3, expected at least 1", build_model("vgg11", o));
  o = default_options("resnet20");
  o.label_smoothing = 1.5;
  EXPECT_ERROR_MENTIONS("option label_smoothing is 1.5, expected a value in [0, 1]", build_model("resnet20", o));
  // An image too small for AlexNet's pools: the error names the node and the input size.
  o = default_options("alexnet");
  o.image_size = 32;
  EXPECT_ERROR_MENTIONS("features.", build_model("alexnet", o));
  EXPECT_ERROR_MENTIONS("in build_model(\"alexnet\") for input 3x32x32", build_model("alexnet", o));
  // The autoencoder ignores num_classes.
  o = default_options("mlp_autoencoder");
  o.num_classes = 0;
  EXPECT_NO_THROW(build_model("mlp_autoencoder", o));
}

TEST(Models, RegistryListsEveryModelOnce) {
  std::map<std::string, int> seen;
  for (const ModelInfo& m : list_models()) ++seen[m.name];
  EXPECT_EQ(seen.size(), 22u);  // 21 image models and token-mlp
  for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(model_info("resnet56").default_image_size, 32);
  EXPECT_EQ(model_info("resnet56").default_num_classes, 10);
  EXPECT_EQ(model_info("mlp_autoencoder").task, Task::reconstruction);
  EXPECT_EQ(default_options("resnet110").num_classes, 10);
  EXPECT_EQ(default_options("vgg19_bn").image_size, 224);
}

}  // namespace
}  // namespace baton::models
