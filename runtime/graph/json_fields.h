// Reading JSON objects (layer configs, training and parallel settings, planner files) field by
// field, with errors that name the source, the field path and what was expected; unknown fields
// are errors too, so a typo ("kernal_size") never passes silently.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// How errors are worded. `document` (planner files): "p.json: field 'nodes[3].fwd_ms': expected an
// array of numbers". `config` (a layer's or an optimiser's settings, where the object is small and
// the value found helps most): "Conv2d config: field 'padding' is "same", expected an integer ...";
// a config may also be null, read as an empty object.
enum class JsonWording { document, config };

class JsonFields {
 public:
  // `source`: the file or the object's name; `path`: where this object sits in it ("nodes[3]";
  // empty at the top).
  JsonFields(const nlohmann::json& object, std::string_view source, std::string path,
             JsonWording wording = JsonWording::document);

  // Fields not in `allowed` are errors.
  void allow_only(std::initializer_list<std::string_view> allowed) const;

  // Each reader with a fallback returns `fallback` when the field is absent.
  bool has(std::string_view key) const;
  const nlohmann::json& at(std::string_view key) const;  // required, any type
  std::string string(std::string_view key) const;
  std::string string(std::string_view key, const std::string& fallback) const {
    return or_fallback(&JsonFields::string, key, fallback);
  }
  double number(std::string_view key) const;  // finite
  double number(std::string_view key, double fallback) const { return or_fallback(&JsonFields::number, key, fallback); }
  double non_negative(std::string_view key) const;
  double non_negative(std::string_view key, double fallback) const {
    return or_fallback(&JsonFields::non_negative, key, fallback);
  }
  int64_t integer(std::string_view key) const;
  int64_t integer(std::string_view key, int64_t fallback) const {
    return or_fallback(&JsonFields::integer, key, fallback);
  }
  int64_t non_negative_integer(std::string_view key) const;  // a count: an integer >= 0
  int64_t non_negative_integer(std::string_view key, int64_t fallback) const {
    return or_fallback(&JsonFields::non_negative_integer, key, fallback);
  }
  int int32(std::string_view key) const;  // an integer that fits in 32 bits (ids, counts)
  int int32(std::string_view key, int fallback) const { return or_fallback(&JsonFields::int32, key, fallback); }
  std::vector<int> int32s(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::vector<double> numbers(std::string_view key) const;
  std::vector<int64_t> integers(std::string_view key) const;
  std::vector<std::string> strings(std::string_view key) const;
  // The objects of an array field, each with its own path ("nodes[3]").
  std::vector<JsonFields> objects(std::string_view key) const;
  JsonFields object(std::string_view key) const;

  // The field `key` (present) is not what was expected; worded as the reader's JsonWording says.
  [[noreturn]] void fail(std::string_view key, std::string_view expected) const;
  const std::string& source() const { return source_; }
  std::string field_path(std::string_view key) const;

 private:
  template <typename T>
  T or_fallback(T (JsonFields::*read)(std::string_view) const, std::string_view key, const T& fallback) const {
    return has(key) ? (this->*read)(key) : fallback;
  }

  const nlohmann::json& object_;
  std::string source_;
  std::string path_;
  JsonWording wording_;
};

// The deepest nesting of arrays and objects a JSON document may have: deeper ones are refused while
// parsing (printing or freeing a value nested ~100,000 deep recurses past the stack).
inline constexpr int kMaxJsonDepth = 256;

// Parses JSON text strictly: a syntax error, a key twice in one object (the parser would keep the
// last one silently) or nesting deeper than kMaxJsonDepth is one error line, "WHERE: ...".
nlohmann::json parse_json_text(const std::string& text, std::string_view where);

// Parses a JSON file (parse_json_text), naming it on a missing file ("PATH: cannot open the WHAT")
// or a bad document ("PATH: not valid JSON (...)", "PATH: the key 'k' appears twice in one object",
// "PATH: nested deeper than 256 levels"); `what` says what the file is for ("graph spec", "config
// file").
nlohmann::json read_json_file(const std::string& path, std::string_view what = "file");
// `json.dump(2)` written atomically.
void write_json_file(const std::string& path, const nlohmann::json& json);

}  // namespace baton
