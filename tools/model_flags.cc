// Parsing of the model commands' shared flags.
#include "tools/model_flags.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "layers/builtin_layers.h"
#include "runtime/core/error.h"
#include "runtime/core/message_text.h"
#include "runtime/graph/json_fields.h"

namespace baton::cli {

namespace {

constexpr int64_t kLargestDimension = int64_t{1} << 31;

// `text` as a decimal integer in [1, 2^31], or nullopt.
std::optional<int64_t> positive(std::string_view text) {
  int64_t value = 0;
  if (!whole_number_problem(text, 1, kLargestDimension, value).empty()) return std::nullopt;
  return value;
}

// The spec's input shapes with --batch (dimension 0 of every input) and --input (the rest of "x").
void resize_inputs(nlohmann::json& spec, const ModelFlags& flags, const std::string& spec_path) {
  if (flags.batch.empty() && flags.input.empty()) return;
  BATON_CHECK(spec.is_object() && spec.contains("inputs") && spec["inputs"].is_array(), spec_path,
              ": missing field 'inputs' (a list)");
  bool found_x = false;
  for (nlohmann::json& input : spec["inputs"]) {
    BATON_CHECK(input.is_object() && input.contains("shape") && input["shape"].is_array() && !input["shape"].empty(),
                spec_path, ": an entry of 'inputs' has no non-empty 'shape'");
    nlohmann::json& shape = input["shape"];
    if (!flags.batch.empty()) shape[0] = parse_positive("--batch", flags.batch);
    if (!flags.input.empty() && input.value("name", "") == "x") {
      const InputDims d = parse_input_dims("--input", flags.input);
      BATON_CHECK(shape.size() == 4, "--input: input 'x' of ", spec_path, " has shape ", shape.dump(),
                  ", not [N, C, H, W]");
      shape = {shape[0], d.channels, d.height, d.width};
      found_x = true;
    }
  }
  BATON_CHECK(flags.input.empty() || found_x, "--input: ", spec_path, " has no input named 'x'");
}

}  // namespace

InputDims parse_input_dims(std::string_view flag, std::string_view text) {
  std::vector<int64_t> dims;
  bool ok = true;
  for (size_t start = 0; ok && start <= text.size();) {
    const size_t end = std::min(text.find('x', start), text.size());
    const std::optional<int64_t> value = positive(text.substr(start, end - start));
    ok = value.has_value();
    if (ok) dims.push_back(*value);
    start = end + 1;
  }
  BATON_CHECK(ok && dims.size() == 3, flag, ": '", text,
              "' is not CxHxW; expected three positive integers joined by 'x', e.g. 3x224x224");
  return {dims[0], dims[1], dims[2]};
}

int64_t parse_positive(std::string_view flag, std::string_view text) {
  int64_t value = 0;
  const std::string problem = whole_number_problem(text, 1, kLargestDimension, value);
  BATON_CHECK(problem.empty(), flag, ": '", text, "' ", too_large(problem) ? problem : "is not a positive integer");
  return value;
}

void add_model_size_flags(CLI::App& cmd, ModelFlags& flags) {
  cmd.add_option("--batch", flags.batch, "Batch size (default 1)");
  cmd.add_option("--classes", flags.classes, "Number of classes (default: the model's)");
  cmd.add_option("--input", flags.input, "Input size CxHxW, e.g. 3x224x224 (default: the model's)");
}

models::ModelOptions model_options(const ModelFlags& flags, bool with_loss) {
  models::ModelOptions o = models::default_options(flags.model);
  o.with_loss = with_loss;
  if (!flags.batch.empty()) o.batch_size = parse_positive("--batch", flags.batch);
  if (!flags.classes.empty()) {
    BATON_CHECK(models::model_info(flags.model).task == models::Task::classification, "--classes: model '", flags.model,
                "' is not a classifier");
    o.num_classes = parse_positive("--classes", flags.classes);
  }
  if (!flags.input.empty()) {
    const InputDims d = parse_input_dims("--input", flags.input);
    BATON_CHECK(d.height == d.width, "--input: '", flags.input,
                "' is not square; the reference models take H = W (e.g. 3x224x224)");
    o.in_channels = d.channels;
    o.image_size = d.height;
  }
  return o;
}

std::string dims_text(int64_t channels, int64_t height, int64_t width) {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

Graph load_model_graph(const ModelFlags& flags, const std::string& spec_path, bool with_loss, std::string* title) {
  BATON_CHECK(flags.model.empty() != spec_path.empty(), "give exactly one of --model and --model-spec");
  if (!flags.model.empty()) {
    const models::ModelOptions options = model_options(flags, with_loss);
    if (title != nullptr) {
      *title = flags.model + " (input " + dims_text(options.in_channels, options.image_size, options.image_size) +
               ", batch " + std::to_string(options.batch_size) + ")";
    }
    return models::build_model(flags.model, options);
  }
  BATON_CHECK(flags.classes.empty(), "--classes applies to --model only (a spec's layers fix the classes)");
  nlohmann::json spec = read_json_file(spec_path, "graph spec");
  resize_inputs(spec, flags, spec_path);
  if (title != nullptr) *title = spec_path;
  return Graph::from_json(spec, layers::builtin_layers(), spec_path);
}

}  // namespace baton::cli
