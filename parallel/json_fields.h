// Reading planner JSON (profiles, plans, schedules, device and cluster descriptions) with errors
// that name the file, the field path and what was expected.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace baton::parallel {

class JsonFields {
 public:
  // `source`: the file; `path`: where this object sits in it ("nodes[3]"; empty at the top).
  JsonFields(const nlohmann::json& object, std::string_view source, std::string path);

  // Fields not in `allowed` are errors (a typo never passes silently).
  void allow_only(std::initializer_list<std::string_view> allowed) const;

  bool has(std::string_view key) const;
  const nlohmann::json& at(std::string_view key) const;  // required, any type
  std::string string(std::string_view key) const;
  std::string string(std::string_view key, const std::string& fallback) const;
  double number(std::string_view key) const;  // finite
  double number(std::string_view key, double fallback) const;
  double non_negative(std::string_view key) const;
  double non_negative(std::string_view key, double fallback) const;
  int64_t integer(std::string_view key) const;
  int64_t integer(std::string_view key, int64_t fallback) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::vector<double> numbers(std::string_view key) const;
  std::vector<int64_t> integers(std::string_view key) const;
  std::vector<std::string> strings(std::string_view key) const;
  // The objects of an array field, each with its own path ("nodes[3]").
  std::vector<JsonFields> objects(std::string_view key) const;
  JsonFields object(std::string_view key) const;

  // "<source>: field '<path>.<key>': expected <expected>".
  [[noreturn]] void fail(std::string_view key, std::string_view expected) const;
  const std::string& source() const { return source_; }
  std::string field_path(std::string_view key) const;

 private:
  const nlohmann::json& object_;
  std::string source_;
  std::string path_;
};

// Parses a JSON file, naming it on a missing file or a syntax error.
nlohmann::json read_json_file(const std::string& path);
// `json.dump(2)` written atomically.
void write_json_file(const std::string& path, const nlohmann::json& json);

}  // namespace baton::parallel
