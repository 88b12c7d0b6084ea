// The model registry: each model's description, defaults and builder, and the option checks.
#include "models/model_registry.h"

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>

#include "models/model_builders.h"
#include "runtime/core/error.h"

namespace baton::models {
namespace {

struct Entry {
  ModelInfo info;
  std::function<Graph(const ModelOptions&)> build;
};

Entry imagenet(std::string name, std::string description, std::function<Graph(const ModelOptions&)> build) {
  return {{std::move(name), std::move(description), Task::classification, 224, 1000}, std::move(build)};
}

Entry cifar_resnet(int depth, const char* published) {
  const int n = (depth - 2) / 6;
  return {{"resnet" + std::to_string(depth),
           "CIFAR ResNet-" + std::to_string(depth) + " (He et al. 2015, sec. 4.2): 3 stages x " + std::to_string(n) +
               " basic blocks, 16/32/64 channels, 1x1-conv + BN shortcuts (option B; the paper's " + published +
               " is with option A)",
           Task::classification, 32, 10},
          [depth](const ModelOptions& o) { return build_cifar_resnet(depth, o); }};
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = [] {
    std::vector<Entry> e;
    for (const auto& [depth, blocks] :
         std::initializer_list<std::pair<int, const char*>>{{18, "basic blocks [2, 2, 2, 2]"},
                                                            {34, "basic blocks [3, 4, 6, 3]"},
                                                            {50, "bottlenecks [3, 4, 6, 3]"},
                                                            {101, "bottlenecks [3, 4, 23, 3]"},
                                                            {152, "bottlenecks [3, 8, 36, 3]"}}) {
      e.push_back(imagenet("resnet" + std::to_string(depth),
                           "ResNet-" + std::to_string(depth) + " (torchvision, v1.5 strides): " + blocks,
                           [depth = depth](const ModelOptions& o) { return build_resnet(depth, o); }));
    }
    for (const auto& [depth, config] :
         std::initializer_list<std::pair<int, const char*>>{{11, "A"}, {13, "B"}, {16, "D"}, {19, "E"}}) {
      for (bool bn : {false, true}) {
        e.push_back(imagenet("vgg" + std::to_string(depth) + (bn ? "_bn" : ""),
                             "VGG-" + std::to_string(depth) + " (torchvision, configuration " + config + ")" +
                                 (bn ? " with batch norm" : ""),
                             [depth = depth, bn](const ModelOptions& o) { return build_vgg(depth, bn, o); }));
      }
    }
    e.push_back(
        imagenet("alexnet", "AlexNet (torchvision's one-GPU variant, 64-192-384-256-256 channels)", build_alexnet));
    e.push_back(imagenet("mobilenet_v2", "MobileNetV2 (torchvision), width 1.0", build_mobilenet_v2));
    e.push_back(cifar_resnet(20, "0.27M parameters"));
    e.push_back(cifar_resnet(32, "0.46M parameters"));
    e.push_back(cifar_resnet(44, "0.66M parameters"));
    e.push_back(cifar_resnet(56, "0.85M parameters"));
    e.push_back(cifar_resnet(110, "1.7M parameters"));
    e.push_back({{"mlp_autoencoder",
                  "MLP autoencoder: flatten, 512-128-32-128-512 with ReLU, sigmoid reconstruction, MSE loss against "
                  "the input",
                  Task::reconstruction, 32, 0},
                 build_mlp_autoencoder});
    e.push_back({{"token-mlp",
                  "token MLP: one-hot token ids [batch, T], Linear V→64, ReLU, Linear 64→V: logits [batch, T, V] "
                  "and per-position cross-entropy",
                  Task::per_position, 0, 16},
                 build_token_mlp});
    return e;
  }();
  return all;
}

const Entry& entry(const std::string& name) {
  for (const Entry& e : entries()) {
    if (e.info.name == name) return e;
  }
  std::string names;
  for (const Entry& e : entries()) names += (names.empty() ? "" : ", ") + e.info.name;
  BATON_FAIL("unknown model '", name, "'; the models are: ", names);
}

void check_at_least_one(const std::string& model, const char* field, int64_t value) {
  BATON_CHECK(value >= 1, "build_model(\"", model, "\"): option ", field, " is ", value, ", expected at least 1");
}

}  // namespace

const std::vector<ModelInfo>& list_models() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

const ModelInfo& model_info(const std::string& name) { return entry(name).info; }

ModelOptions default_options(const std::string& name) {
  const ModelInfo& info = model_info(name);
  ModelOptions o;
  o.image_size = info.default_image_size;
  if (info.task != Task::reconstruction) o.num_classes = info.default_num_classes;
  return o;
}

Graph build_model(const std::string& name, const ModelOptions& options) {
  const Entry& e = entry(name);
  check_at_least_one(name, "batch_size", options.batch_size);
  const bool tokens = e.info.task == Task::per_position;
  if (!tokens) {
    check_at_least_one(name, "in_channels", options.in_channels);
    check_at_least_one(name, "image_size", options.image_size);
  }
  if (e.info.task != Task::reconstruction) check_at_least_one(name, "num_classes", options.num_classes);
  if (tokens) check_at_least_one(name, "sequence_length", options.sequence_length);
  BATON_CHECK(options.label_smoothing >= 0 && options.label_smoothing <= 1, "build_model(\"", name,
              "\"): option label_smoothing is ", options.label_smoothing, ", expected a value in [0, 1]");
  BATON_CHECK(is_master_dtype(options.dtype), "build_model(\"", name, "\"): option dtype is ",
              dtype_name(options.dtype), ", expected ", master_dtypes_text(), " (the parameter dtypes)");
  if (options.dropout) {
    BATON_CHECK(*options.dropout >= 0 && *options.dropout < 1, "build_model(\"", name, "\"): option dropout is ",
                *options.dropout, ", expected a drop probability in [0, 1) (0 switches dropout off)");
  }
  try {
    return e.build(options);
  } catch (Error& error) {
    error.add_context("in build_model(\"" + name + "\") for input " +
                      (tokens ? std::to_string(options.sequence_length) + " tokens"
                              : std::to_string(options.in_channels) + "x" + std::to_string(options.image_size) + "x" +
                                    std::to_string(options.image_size)));
    throw;
  }
}

const char* task_name(Task task) {
  static constexpr const char* kNames[] = {"classification", "reconstruction", "per-position"};
  return kNames[static_cast<int>(task)];
}

}  // namespace baton::models
