// One training run as one library call (see parallel_training_run.h): the data, the model, the
// engine of the run's kind and the Trainer.
#include "parallel/parallel_training_run.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "models/model_registry.h"
#include "parallel/comm/agreement.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "runtime/data/batch_memory.h"
#include "runtime/data/dataset_fingerprint.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/checkpoint.h"

namespace baton::parallel {

Graph build_training_graph(const TrainConfig& config, const data::Dataset& train_set) {
  if (!config.model_spec.empty()) {
    return Graph::from_json(read_json_file(config.model_spec, "model spec"), layers::builtin_layers(),
                            config.model_spec);
  }
  const bool token_model = models::model_info(config.model).task == models::Task::per_position;
  BATON_CHECK(token_model == !train_set.has_images(), "model '", config.model, "' takes ",
              token_model ? "token sequences" : "images", "; data '", config.data, "' holds ",
              data::layout_text(train_set.layout()));
  if (token_model) {
    const Shape targets = train_set.layout().targets.shape;
    BATON_CHECK(targets.rank() == 1, "data '", config.data, "': model '", config.model,
                "' takes per-position targets [T], not ", targets.str());
    return models::build_model(config.model, {.batch_size = config.batch_size,
                                              .num_classes = train_set.num_classes(),
                                              .sequence_length = targets[0],
                                              .with_loss = true,
                                              .label_smoothing = config.label_smoothing});
  }
  const Shape image = train_set.image_shape();
  BATON_CHECK(image[1] == image[2], "data '", config.data, "' has ", image[1], "x", image[2],
              " images; the reference models take square images");
  return models::build_model(config.model, {.batch_size = config.batch_size,
                                            .num_classes = train_set.num_classes(),
                                            .in_channels = image[0],
                                            .image_size = image[1],
                                            .with_loss = true,
                                            .label_smoothing = config.label_smoothing});
}

Device single_training_device(const std::string& name, RunReport& report) {
  if (name == "auto") {
    if (cuda_device_count() > 0) {
      report.line("device: cuda:0 (auto)");
      return Device::cuda(0);
    }
    report.line("device: cpu (auto: no GPU found — " + query_system_info().cuda_unavailable_reason + ")");
    return Device::cpu();
  }
  const Device d = Device::parse(name);
  check_device(d);
  report.line("device: " + d.str());
  return d;
}

std::string rank_path(const std::string& path, int rank) {
  const std::string suffix = ".rank" + std::to_string(rank);
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && slash > dot)) return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

std::string data_spec_for_model(const TrainConfig& config) {
  if (config.data != "synthetic" || !config.model_spec.empty()) return config.data;
  const models::ModelInfo& model = models::model_info(config.model);
  if (model.task != models::Task::classification) return config.data;
  const std::string size = std::to_string(model.default_image_size);
  return "synthetic:3x" + size + "x" + size + ":" + std::to_string(model.default_num_classes);
}

namespace {

// "a.b = value" per leaf of `j`, in the order of its (sorted) keys.
void flatten(const nlohmann::json& j, const std::string& path, std::vector<std::string>& lines) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [key, value] : j.items()) flatten(value, path.empty() ? key : path + "." + key, lines);
    return;
  }
  lines.push_back(path + " = " + j.dump());
}

}  // namespace

void check_settings_agree(comm::Communicator& world, const TrainConfig& config, const ParallelConfig& parallel,
                          const data::Dataset& train_set, const data::Dataset* test_set) {
  std::vector<std::string> lines;
  flatten(config.to_json(), "", lines);
  flatten(parallel.to_json(), "parallel", lines);
  comm::check_agreement(world, "the training configuration", lines);
  // Equal specs may still name other files on another machine: the data itself, summarised.
  std::vector<std::string> data = data::dataset_fingerprint(train_set, "train");
  if (test_set != nullptr) {
    const std::vector<std::string> test = data::dataset_fingerprint(*test_set, "test");
    data.insert(data.end(), test.begin(), test.end());
  }
  comm::check_agreement(world, "the training data", data);
  if (config.resume) {  // every rank resumes (the configuration says so): from the same step
    const std::optional<std::string> latest = CheckpointManager(config.checkpoint_dir, 0).latest();
    comm::check_agreement(world, "the checkpoint resumed from",
                          {latest ? std::filesystem::path(*latest).filename().string() : "none yet (a fresh start)"});
  }
}

TrainSummary train(const TrainRequest& request, RunReport& report, const std::function<bool()>& stop_requested) {
  const TrainConfig& config = request.train;
  const Device device =
      request.kind == RunKind::single_device ? single_training_device(config.device, report) : Device::cpu();
  const std::string data = data_spec_for_model(config);
  const std::unique_ptr<data::Dataset> train_set = data::open_dataset(data, data::Split::train, config.seed);
  data::check_batch_fits_memory(*train_set, config.batch_size);  // before the test split measures its images
  const std::unique_ptr<data::Dataset> test_set = data::open_dataset(data, data::Split::test, config.seed);
  const Graph graph = build_training_graph(config, *train_set);
  const std::string model_name = config.model_spec.empty() ? config.model : config.model_spec;
  report.line(formatted("training %s on %s: %lld train / %lld test samples, batch %lld", model_name.c_str(),
                        train_set->name().c_str(), static_cast<long long>(train_set->size()),
                        static_cast<long long>(test_set->size()), static_cast<long long>(config.batch_size)));
  switch (request.kind) {
    case RunKind::data_parallel:
      return train_data_parallel(graph, config, request.parallel, *train_set, test_set.get(), report, stop_requested);
    case RunKind::pipelined:
      return train_pipelined(graph, model_name, config, request.parallel, *train_set, test_set.get(), report,
                             stop_requested);
    case RunKind::single_device:
      break;
  }
  return Trainer(graph, config, *train_set, test_set.get(), device).run(stop_requested);
}

}  // namespace baton::parallel
