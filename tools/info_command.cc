// `baton info`: a model's (or a graph spec's) nodes in topological order with output shape,
// parameters, MACs and activation bytes, then totals; --json for the same as JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "layers/builtin_layers.h"
#include "models/model_summary.h"
#include "runtime/core/error.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

struct InfoOptions {
  ModelFlags model;
  std::string spec_path;
  bool json = false;
};

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  BATON_CHECK(in, path, ": cannot open the graph spec");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    BATON_FAIL(path, ": not valid JSON: ", e.what());
  }
}

// The spec's input shapes with --batch (dimension 0 of every input) and --input (the rest of "x").
void resize_inputs(nlohmann::json& spec, const InfoOptions& o) {
  if (o.model.batch.empty() && o.model.input.empty()) return;
  BATON_CHECK(spec.is_object() && spec.contains("inputs") && spec["inputs"].is_array(), o.spec_path,
              ": missing field 'inputs' (a list)");
  bool found_x = false;
  for (nlohmann::json& input : spec["inputs"]) {
    BATON_CHECK(input.is_object() && input.contains("shape") && input["shape"].is_array() && !input["shape"].empty(),
                o.spec_path, ": an entry of 'inputs' has no non-empty 'shape'");
    nlohmann::json& shape = input["shape"];
    if (!o.model.batch.empty()) shape[0] = parse_positive("--batch", o.model.batch);
    if (!o.model.input.empty() && input.value("name", "") == "x") {
      const InputDims d = parse_input_dims("--input", o.model.input);
      BATON_CHECK(shape.size() == 4, "--input: input 'x' of ", o.spec_path, " has shape ", shape.dump(),
                  ", not [N, C, H, W]");
      shape = {shape[0], d.channels, d.height, d.width};
      found_x = true;
    }
  }
  BATON_CHECK(o.model.input.empty() || found_x, "--input: ", o.spec_path, " has no input named 'x'");
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void print_table(const std::string& title, const models::GraphSummary& s) {
  size_t name_width = 5, type_width = 4;
  for (const models::NodeSummary& n : s.nodes) {
    name_width = std::max(name_width, n.name.size());
    type_width = std::max(type_width, n.type.size());
  }
  const int nw = static_cast<int>(name_width), tw = static_cast<int>(type_width);
  std::printf("%s\n%-*s  %-*s  %-20s %14s %16s %18s\n", title.c_str(), nw, "node", tw, "type", "output shape", "params",
              "MACs", "activation bytes");
  for (const models::NodeSummary& n : s.nodes) {
    std::printf("%-*s  %-*s  %-20s %14s %16s %18s\n", nw, n.name.c_str(), tw, n.type.c_str(),
                n.output_shape.str().c_str(), with_commas(n.params).c_str(), with_commas(std::llround(n.macs)).c_str(),
                with_commas(n.activation_bytes).c_str());
  }
  std::printf("%-*s  %-*s  %-20s %14s %16s %18s\n", nw, "total", tw, "", "", with_commas(s.params).c_str(),
              with_commas(std::llround(s.macs)).c_str(), with_commas(s.activation_bytes).c_str());
  std::printf("%lld nodes; %.2f M parameters, %.2f G MACs, %.1f MiB of activations\n",
              static_cast<long long>(s.nodes.size()), static_cast<double>(s.params) / 1e6, s.macs / 1e9,
              static_cast<double>(s.activation_bytes) / (1024.0 * 1024.0));
}

void run_info(const InfoOptions& o) {
  BATON_CHECK(o.model.model.empty() != o.spec_path.empty(), "give exactly one of --model and --model-spec");
  std::string title;
  Graph graph;
  if (!o.model.model.empty()) {
    const models::ModelOptions options = model_options(o.model, true);
    graph = models::build_model(o.model.model, options);
    title = o.model.model + " (input " + dims_text(options.in_channels, options.image_size, options.image_size) +
            ", batch " + std::to_string(options.batch_size) + ")";
  } else {
    BATON_CHECK(o.model.classes.empty(), "--classes applies to --model only (a spec's layers fix the classes)");
    nlohmann::json spec = read_json_file(o.spec_path);
    resize_inputs(spec, o);
    graph = Graph::from_json(spec, layers::builtin_layers(), o.spec_path);
    title = o.spec_path;
  }
  const models::GraphSummary summary = models::summarize(graph);
  if (o.json) {
    std::printf("%s\n", models::summary_json(summary).dump(2).c_str());
  } else {
    print_table(title, summary);
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Per-node output shapes, parameters, MACs and activation bytes of a model or a graph spec, and totals");
  CLI::Option* model = cmd->add_option("--model", options->model.model, "Model name (see `baton models`)");
  CLI::Option* spec = cmd->add_option("--model-spec", options->spec_path, "Graph spec file (JSON, see export-spec)");
  model->excludes(spec);
  add_model_size_flags(*cmd, options->model);
  cmd->add_flag("--json", options->json, "Print JSON: {\"params\", \"macs\", \"nodes\": [...]}");
  cmd->callback([options] { run_info(*options); });
}

}  // namespace baton::cli
