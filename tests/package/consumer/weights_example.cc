// Embedding baton as a research prototype: ResNet-20's weights in a safetensors file of torchvision
// names are loaded, then forward, backward and an SGD step run through the trainer's contract
// (runtime/train/graph_contract.h) and the loss is printed. Exits non-zero on any error.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "models/model_registry.h"
#include "runtime/core/error.h"
#include "runtime/data/dataset.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/evaluation.h"
#include "runtime/train/graph_contract.h"

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "weights.safetensors").string();
  try {
    baton::Context ctx(baton::Device::cpu());
    const baton::Graph graph = baton::models::build_model(
        "resnet20", {.batch_size = 16, .num_classes = 10, .in_channels = 3, .image_size = 32});
    baton::check_trainable(graph, "weights-example");
    // The parameters take the model's dtype (ModelOptions::dtype, f32 here); load_weights converts a
    // file of another floating dtype to it.
    baton::ParamStore params(graph, graph.topological_order(), baton::parameter_dtype(graph), ctx);
    params.initialize(ctx, 7);
    baton::save_weights(path, params, ctx);  // stands for torchvision weights saved with safetensors
    params.initialize(ctx, 0);
    baton::load_weights(path, params, ctx);  // every parameter and buffer by name, checked first

    const auto data = baton::data::open_dataset("synthetic:3x32x32:10:16", baton::data::Split::train, 0);
    baton::data::LoaderOptions options;
    options.batch_size = 16;
    options.workers = 1;
    options.normalization = data->normalization();
    baton::data::DataLoader loader(*data, options, ctx.device());
    const std::optional<baton::data::Batch> batch = loader.next(ctx.stream());

    baton::Executor executor(graph, graph.topological_order(), params);
    const auto sgd = baton::make_optimizer({{"type", "sgd"}, {"momentum", 0.9}}, params, ctx, "weights-example");
    params.zero_grads(ctx);
    baton::Tape tape;
    const std::vector<baton::Tensor> out =
        executor.forward(ctx, baton::batch_inputs(graph, executor, *batch), tape, baton::Mode::train);
    executor.backward(ctx, tape, std::vector<baton::Tensor>(out.size()));  // from the loss
    sgd->step(ctx, 0.05);
    const baton::Tensor loss = out[baton::executor_output_index(executor, baton::loss_output(graph))];
    const float value = loss.to_vector<float>(ctx.stream())[0];
    std::printf("weights-example: resnet20 from %s, loss %.4f\n", path.c_str(), value);
    if (!std::isfinite(value)) {
      std::fprintf(stderr, "weights-example: FAILED: the loss is not finite\n");
      return 1;
    }
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "weights-example: FAILED: baton::Error: %s\n", e.what());
    return 1;
  }
  std::printf("weights-example: ok\n");
  return 0;
}
