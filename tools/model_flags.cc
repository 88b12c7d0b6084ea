// Parsing of the model commands' shared flags.
#include "tools/model_flags.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

#include "runtime/core/error.h"

namespace baton::cli {

namespace {

// `text` as a decimal integer in [1, 2^31], or nullopt.
std::optional<int64_t> positive(std::string_view text) {
  int64_t value = 0;
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || status != std::errc() || end != text.data() + text.size() || value < 1 ||
      value > (int64_t{1} << 31)) {
    return std::nullopt;
  }
  return value;
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
  const std::optional<int64_t> value = positive(text);
  BATON_CHECK(value.has_value(), flag, ": '", text, "' is not a positive integer");
  return *value;
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

}  // namespace baton::cli
