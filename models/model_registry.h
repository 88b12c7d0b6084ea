// The reference models: torchvision's ResNets, VGGs, AlexNet and MobileNetV2, the CIFAR ResNets of
// He et al., and a small MLP autoencoder, built as graphs whose parameter names are torchvision's
// state_dict keys ("layer1.0.conv1.weight"), by name from one registry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/graph/graph.h"
#include "runtime/graph/precision.h"

namespace baton::models {

// classification: images to classes; reconstruction: images to images; per_position: token ids
// [batch, T] to a class per position ([batch, T] targets, e.g. the next token).
enum class Task { classification, reconstruction, per_position };

struct ModelOptions {
  int64_t batch_size = 1;      // the graph's nominal batch size, >= 1
  int64_t num_classes = 1000;  // classification only, >= 1
  int64_t in_channels = 3;
  int64_t image_size = 224;     // square inputs: image_size x image_size
  int64_t sequence_length = 8;  // per_position models: tokens per sample (num_classes: the vocabulary)
  bool with_loss = true;
  double label_smoothing = 0;  // of the classification loss, in [0, 1]
  // The element type of input "x", of every activation and output, and of the parameters (a
  // ParamStore for the graph takes parameter_dtype(graph), runtime/train/graph_contract.h): f32 or
  // f64. The labels stay i64.
  DType dtype = kDefaultDType;
  // The drop probability of every Dropout layer (VGG, AlexNet, MobileNetV2), in [0, 1): unset keeps
  // torchvision's (0.5, 0.5, 0.2); 0 switches dropout off (the layers stay, as the identity, so node
  // names do not change). Models without dropout ignore it.
  std::optional<double> dropout = std::nullopt;
};

struct ModelInfo {
  std::string name;
  std::string description;
  Task task;
  int64_t default_image_size;
  int64_t default_num_classes;  // 0 for reconstruction models
};

// Every model, in a fixed order (families together, smallest first).
const std::vector<ModelInfo>& list_models();
// The model's entry; an unknown name is a baton::Error listing the models.
const ModelInfo& model_info(const std::string& name);
// ModelOptions with the model's default image size and number of classes (batch 1, 3 channels).
ModelOptions default_options(const std::string& name);

// Builds the named model. Graph inputs: "x" [batch, in_channels, image_size, image_size] of
// options.dtype and, for classification with_loss, "labels" [batch] i64. With with_loss the graph outputs are exactly
// {loss (a scalar: SoftmaxCrossEntropy, or MSELoss against the flattened x for reconstruction), the
// prediction (logits [batch, classes] or the reconstruction [batch, in_channels·image_size²])} in
// that order; without, just the prediction. Errors: an unknown name (listing the models), an option
// out of range or a dtype other than f32 and f64 (naming the option), an image too small for the
// model (naming the node).
Graph build_model(const std::string& name, const ModelOptions& options);

const char* task_name(Task task);  // "classification", "reconstruction", "per-position"

}  // namespace baton::models
