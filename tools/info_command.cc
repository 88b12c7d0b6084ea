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

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// MACs with commas, or in scientific notation beyond 64 bits.
std::string mac_text(double macs) {
  const std::optional<int64_t> whole = models::whole_macs(macs);
  if (whole) return with_commas(*whole);
  char text[32];
  std::snprintf(text, sizeof text, "%.3e", macs);
  return text;
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
                n.output_shape.str().c_str(), with_commas(n.params).c_str(), mac_text(n.macs).c_str(),
                with_commas(n.activation_bytes).c_str());
  }
  std::printf("%-*s  %-*s  %-20s %14s %16s %18s\n", nw, "total", tw, "", "", with_commas(s.params).c_str(),
              mac_text(s.macs).c_str(), with_commas(s.activation_bytes).c_str());
  std::printf("%lld nodes; %.2f M parameters, %.2f G MACs, %.1f MiB of activations\n",
              static_cast<long long>(s.nodes.size()), static_cast<double>(s.params) / 1e6, s.macs / 1e9,
              static_cast<double>(s.activation_bytes) / (1024.0 * 1024.0));
}

void run_info(const InfoOptions& o) {
  std::string title;
  const Graph graph = load_model_graph(o.model, o.spec_path, true, &title);
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
