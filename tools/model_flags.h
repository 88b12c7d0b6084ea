// Command-line flags shared by the model commands (export-spec, info): --model, --batch, --classes,
// --input CxHxW, parsed strictly into models::ModelOptions, with errors that name the flag.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "models/model_registry.h"
#include "runtime/graph/graph.h"

namespace baton::cli {

struct InputDims {
  int64_t channels = 0, height = 0, width = 0;
};

// "3x224x224": three positive integers joined by 'x', nothing else. Throws a baton::Error naming
// `flag` and the expected form.
InputDims parse_input_dims(std::string_view flag, std::string_view text);
// A positive decimal integer, nothing else; throws a baton::Error naming `flag`.
int64_t parse_positive(std::string_view flag, std::string_view text);

// The flags as typed (empty: not given), parsed by model_options.
struct ModelFlags {
  std::string model;
  std::string batch;
  std::string classes;
  std::string input;
};

// Adds --batch, --classes and --input (not --model, whose wording differs between commands).
void add_model_size_flags(CLI::App& cmd, ModelFlags& flags);

// The model's default options (models::default_options) with the flags applied; --input must be
// square for the reference models. `with_loss` as given.
models::ModelOptions model_options(const ModelFlags& flags, bool with_loss);

// The graph of --model (with the size flags) or of --model-spec FILE (--batch and --input resize its
// inputs); exactly one must be given. `title` (optional) receives a one-line description.
Graph load_model_graph(const ModelFlags& flags, const std::string& spec_path, bool with_loss,
                       std::string* title = nullptr);

// "3x224x224"
std::string dims_text(int64_t channels, int64_t height, int64_t width);

}  // namespace baton::cli
