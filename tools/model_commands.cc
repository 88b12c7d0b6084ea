// `baton models` (the reference models, their task and default input) and `baton export-spec`
// (a model's graph spec as JSON, written atomically).
#include <cstdio>
#include <memory>
#include <string>

#include "models/model_registry.h"
#include "runtime/core/atomic_file.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

void print_models() {
  std::printf("%-16s %-15s %-14s %-8s %s\n", "name", "task", "default input", "classes", "description");
  for (const models::ModelInfo& m : models::list_models()) {
    const bool tokens = m.task == models::Task::per_position;
    const std::string input = tokens ? "token ids" : dims_text(3, m.default_image_size, m.default_image_size);
    const std::string classes = m.task != models::Task::reconstruction ? std::to_string(m.default_num_classes) : "-";
    std::printf("%-16s %-15s %-14s %-8s %s\n", m.name.c_str(), models::task_name(m.task), input.c_str(),
                classes.c_str(), m.description.c_str());
  }
}

struct ExportOptions {
  ModelFlags model;
  std::string out;
  bool no_loss = false;
};

void export_spec(const ExportOptions& e) {
  const models::ModelOptions o = model_options(e.model, !e.no_loss);
  const Graph graph = models::build_model(e.model.model, o);
  write_file_atomically(e.out, graph.to_json().dump(2) + "\n");
  std::printf("wrote %s: %s, input %s, batch %lld, %d layers\n", e.out.c_str(), e.model.model.c_str(),
              dims_text(o.in_channels, o.image_size, o.image_size).c_str(), static_cast<long long>(o.batch_size),
              graph.num_nodes());
}

}  // namespace

void add_models_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("models", "List the reference models: name, task, default input, description");
  cmd->callback(print_models);
}

void add_export_spec_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export-spec", "Write a reference model's graph spec (JSON) to a file");
  cmd->add_option("--model", options->model.model, "Model name (see `baton models`)")->required();
  add_model_size_flags(*cmd, options->model);
  cmd->add_option("--out", options->out, "Output file (written atomically)")->required();
  cmd->add_flag("--no-loss", options->no_loss, "Without the loss node and the labels input (inference graph)");
  cmd->callback([options] { export_spec(*options); });
}

}  // namespace baton::cli
