// Differences between a file's tensors and the expected ones, as lines of one error message.
#include "runtime/train/tensor_matching.h"

#include <algorithm>
#include <unordered_set>

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

}  // namespace

std::vector<std::string> tensor_mismatches(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected) {
  std::vector<std::string> missing, unexpected, lines;
  std::unordered_set<std::string> wanted;
  for (const ExpectedTensor& e : expected) {
    wanted.insert(e.name);
    if (!file.contains(e.name)) {
      if (!e.optional) missing.push_back(e.name);
      continue;
    }
    const SafetensorsTensorInfo& info = file.info(e.name);
    if (info.dtype != e.destination.dtype() || info.shape != e.destination.shape()) {
      lines.push_back("tensor '" + e.name + "' is " + describe(info.dtype, info.shape) + " in the file, expected " +
                      describe(e.destination.dtype(), e.destination.shape()));
    }
  }
  for (const std::string& name : file.names()) {
    if (!wanted.contains(name)) unexpected.push_back(name);
  }
  if (!unexpected.empty()) {
    lines.insert(lines.begin(), std::to_string(unexpected.size()) + " unexpected tensor(s): " + name_list(unexpected));
  }
  if (!missing.empty()) {
    lines.insert(lines.begin(), std::to_string(missing.size()) + " missing tensor(s): " + name_list(missing));
  }
  return lines;
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

void read_expected(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected, const Stream& stream,
                   HostStaging& staging) {
  try {
    for (const ExpectedTensor& e : expected) {
      if (file.contains(e.name)) file.read_into(e.name, e.destination, stream, staging);
    }
  } catch (Error& e) {
    // Only a read fault (the file changing underneath, a disk error) gets here after validation.
    e.add_context("while loading '" + file.path() +
                  "', which had been validated: tensors read before the fault "
                  "were already copied");
    throw;
  }
}

}  // namespace baton
