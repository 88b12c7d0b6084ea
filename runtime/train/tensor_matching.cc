// Differences between a file's tensors and the expected ones, as lines of one error message, and
// the copy (with dtype conversion) once they match.
#include "runtime/train/tensor_matching.h"

#include <algorithm>
#include <unordered_set>

#include "kernels/elementwise.h"
#include "runtime/core/error.h"

namespace baton {
namespace {

constexpr size_t kNamesListed = 20;

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kNamesListed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kNamesListed) out += ", ... (" + std::to_string(names.size() - kNamesListed) + " more)";
  return out;
}

std::string describe(DType dtype, const Shape& shape) {
  return std::string(safetensors_dtype_name(dtype)) + " " + shape.str();
}

bool floating_pair(DType a, DType b) { return is_floating(a) && is_floating(b); }

}  // namespace

void merge_dtype_difference(std::vector<DTypeDifference>& groups, const DTypeDifference& difference) {
  for (DTypeDifference& g : groups) {
    if (g.file == difference.file && g.model == difference.model) {
      g.count += difference.count;
      return;
    }
  }
  groups.push_back(difference);
}

TensorMismatches tensor_mismatches(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected,
                                   DTypeRule rule) {
  TensorMismatches out;
  std::vector<std::string> missing, unexpected;
  std::unordered_set<std::string> wanted;
  for (const ExpectedTensor& e : expected) {
    wanted.insert(e.name);
    if (!file.contains(e.name)) {
      if (!e.optional) missing.push_back(e.name);
      continue;
    }
    const SafetensorsTensorInfo& info = file.info(e.name);
    const DType want = e.destination.dtype();
    if (info.shape == e.destination.shape() && info.dtype != want && floating_pair(info.dtype, want)) {
      if (rule == DTypeRule::exact) merge_dtype_difference(out.dtypes, {info.dtype, want, 1, e.name});
    } else if (info.dtype != want || info.shape != e.destination.shape()) {
      out.lines.push_back("tensor '" + e.name + "' is " + describe(info.dtype, info.shape) + " in the file, expected " +
                          describe(want, e.destination.shape()));
    }
  }
  for (const std::string& name : file.names()) {
    if (!wanted.contains(name)) unexpected.push_back(name);
  }
  if (!unexpected.empty()) {
    out.lines.insert(out.lines.begin(),
                     std::to_string(unexpected.size()) + " unexpected tensor(s): " + name_list(unexpected));
  }
  if (!missing.empty()) {
    out.lines.insert(out.lines.begin(), std::to_string(missing.size()) + " missing tensor(s): " + name_list(missing));
  }
  return out;
}

std::string describe(const DTypeDifference& d) {
  return std::to_string(d.count) + " tensor(s) are " + std::string(dtype_name(d.file)) +
         " in the file where the model has " + std::string(dtype_name(d.model)) + " (" + d.first +
         (d.count > 1 ? ", ...)" : ")");
}

void check_no_mismatches(const std::string& what, const std::vector<std::pair<std::string, std::string>>& problems) {
  if (problems.empty()) return;
  std::string message = "cannot load " + what + ": it does not match the model (nothing was loaded)";
  for (const auto& [file, problem] : problems) message += "\n  " + file + ": " + problem;
  BATON_FAIL(message);
}

size_t largest_destination_bytes(const std::vector<ExpectedTensor>& expected) {
  size_t largest = 0;
  for (const ExpectedTensor& e : expected) largest = std::max(largest, e.destination.nbytes());
  return largest;
}

bool never_negative(const std::string& name) {
  return name.ends_with(".running_var") || name.ends_with(".num_batches_tracked") || name.starts_with("exp_avg_sq.");
}

void check_tensor_data(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected) {
  for (const ExpectedTensor& e : expected) {
    if (file.contains(e.name)) file.check_data(e.name, never_negative(e.name));
  }
}

void read_expected(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected, Context& ctx,
                   HostStaging& staging) {
  try {
    for (const ExpectedTensor& e : expected) {
      if (!file.contains(e.name)) continue;
      const SafetensorsTensorInfo& info = file.info(e.name);
      if (info.dtype == e.destination.dtype()) {
        file.read_into(e.name, e.destination, ctx.stream(), staging);
        continue;
      }
      BATON_CHECK(floating_pair(info.dtype, e.destination.dtype()), "tensor '", e.name, "' is ", dtype_name(info.dtype),
                  " in the file and ", dtype_name(e.destination.dtype()),
                  " in the model: only floating dtypes convert");
      const Tensor staged = Tensor::empty(info.shape, info.dtype, ctx);
      file.read_into(e.name, staged, ctx.stream(), staging);
      kernels::cast(ctx, staged, e.destination);
    }
    ctx.synchronize();
  } catch (Error& e) {
    // Only a read fault (the file changing underneath, a disk error) gets here after validation.
    e.add_context("while loading '" + file.path() +
                  "', which had been validated: tensors read before the fault "
                  "were already copied");
    throw;
  }
}

}  // namespace baton
