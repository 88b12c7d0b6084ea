// Batch's helpers and split_rows, the one row split of batches and graph inputs.
#include "runtime/data/batch.h"

#include <utility>

#include "runtime/core/error.h"

namespace baton::data {
namespace {

std::string names_of(const std::vector<BatchInput>& inputs) {
  std::string names;
  for (const BatchInput& in : inputs) names += (names.empty() ? "\"" : ", \"") + in.name + "\"";
  return names.empty() ? "none" : names;
}

std::string tensor_text(const Tensor& t) {
  return t.defined() ? t.shape().str() + " " + std::string(dtype_name(t.dtype())) : "(undefined)";
}

}  // namespace

bool Batch::has_input(std::string_view name) const {
  for (const BatchInput& in : inputs) {
    if (in.name == name) return true;
  }
  return false;
}

const Tensor& Batch::input(std::string_view name) const {
  for (const BatchInput& in : inputs) {
    if (in.name == name) return in.tensor;
  }
  BATON_FAIL("the batch has no input \"", name, "\"; its inputs: ", names_of(inputs));
}

int64_t Batch::rows() const {
  BATON_CHECK(!inputs.empty() && inputs[0].tensor.defined() && inputs[0].tensor.rank() >= 1,
              "a batch needs an input with its rows in dimension 0, has ", describe());
  return inputs[0].tensor.size(0);
}

std::vector<Batch> Batch::split(int64_t parts) const {
  std::vector<Tensor> tensors;
  for (const BatchInput& in : inputs) tensors.push_back(in.tensor);
  if (targets.defined()) tensors.push_back(targets);
  const std::vector<std::vector<Tensor>> cut = split_rows(tensors, parts, "batch split");
  std::vector<Batch> out;
  for (const std::vector<Tensor>& part : cut) {
    Batch b{.inputs = {}, .targets = targets.defined() ? part.back() : Tensor(), .epoch = epoch, .index = index};
    for (size_t k = 0; k < inputs.size(); ++k) b.inputs.push_back({inputs[k].name, part[k]});
    out.push_back(std::move(b));
  }
  return out;
}

Batch Batch::map(const std::function<Tensor(const Tensor&)>& f) const {
  Batch out{.inputs = {}, .targets = targets.defined() ? f(targets) : Tensor(), .epoch = epoch, .index = index};
  for (const BatchInput& in : inputs) out.inputs.push_back({in.name, f(in.tensor)});
  return out;
}

std::string Batch::describe() const {
  std::string text;
  for (const BatchInput& in : inputs) text += in.name + " " + tensor_text(in.tensor) + ", ";
  return text + "targets " + tensor_text(targets);
}

Batch image_batch(Tensor images, Tensor labels) {
  return {.inputs = {{std::string(kImagesInput), std::move(images)}}, .targets = std::move(labels)};
}

std::vector<std::vector<Tensor>> split_rows(const std::vector<Tensor>& tensors, int64_t parts, std::string_view what) {
  BATON_CHECK(!tensors.empty(), what, ": no tensors to split");
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    BATON_CHECK(t.defined() && t.rank() >= 1 && t.size(0) == tensors[0].size(0), what, ": tensor ", k, " (",
                tensor_text(t), ") must have the batch's ", tensors[0].defined() ? tensors[0].size(0) : 0,
                " rows in dimension 0");
  }
  const int64_t rows = tensors[0].size(0);
  BATON_CHECK(parts >= 1 && parts <= rows, what, ": a batch of ", rows, " rows cannot be split into ", parts, " parts");
  std::vector<std::vector<Tensor>> out(static_cast<size_t>(parts));
  for (const Tensor& t : tensors) {
    std::vector<Tensor> views = t.split(parts);
    for (int64_t p = 0; p < parts; ++p) out[static_cast<size_t>(p)].push_back(std::move(views[static_cast<size_t>(p)]));
  }
  return out;
}

}  // namespace baton::data
