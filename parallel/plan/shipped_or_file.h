// The planner's descriptions (devices, clusters) given by a shipped name or by a JSON file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {

// from_json(the file's JSON, the path) when `name_or_file` is a file, otherwise by_name(it).
template <typename T>
T load_shipped_or_file(const std::string& name_or_file, T (*from_json)(const nlohmann::json&, std::string_view),
                       T (*by_name)(std::string_view)) {
  if (std::filesystem::exists(name_or_file) && !std::filesystem::is_directory(name_or_file)) {
    return from_json(read_json_file(name_or_file), name_or_file);
  }
  return by_name(name_or_file);
}

// "unknown WHAT 'NAME' (shipped: a, b, ...; or a JSON file)".
[[noreturn]] inline void fail_unknown_shipped(std::string_view what, std::string_view name,
                                              const std::vector<std::string>& shipped) {
  std::string list;
  for (const std::string& n : shipped) list += (list.empty() ? "" : ", ") + n;
  BATON_FAIL("unknown ", what, " '", name, "' (shipped: ", list, "; or a JSON file)");
}

}  // namespace baton::parallel
