// JsonFields: typed, path-aware field reads of JSON objects, and JSON files read and written atomically.
#include "runtime/graph/json_fields.h"

#include <cmath>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"
#include "runtime/core/regular_file.h"

namespace baton {
namespace {

// x, unless it is negative: then the field `key` is not what was expected.
template <typename T>
T at_least_zero(const JsonFields& fields, std::string_view key, T x, std::string_view expected) {
  if (x < 0) fields.fail(key, expected);
  return x;
}

}  // namespace

JsonFields::JsonFields(const nlohmann::json& object, std::string_view source, std::string path, JsonWording wording)
    : object_(object), source_(source), path_(std::move(path)), wording_(wording) {
  if (wording_ == JsonWording::config) {
    BATON_CHECK(object_.is_object() || object_.is_null(), source_, ": expected a JSON object, got ",
                object_.type_name());
    return;
  }
  if (!object_.is_object()) {
    BATON_FAIL(source_, ": ", path_.empty() ? std::string("the document") : "field '" + path_ + "'",
               ": expected a JSON object, found ", object_.type_name());
  }
}

std::string JsonFields::field_path(std::string_view key) const {
  std::string p = path_;
  if (!p.empty()) p += '.';
  p += key;
  return p;
}

void JsonFields::fail(std::string_view key, std::string_view expected) const {
  if (wording_ == JsonWording::config && has(key)) {
    BATON_FAIL(source_, ": field '", field_path(key), "' is ", object_.at(std::string(key)).dump(), ", expected ",
               expected);
  }
  BATON_FAIL(source_, ": field '", field_path(key), "': expected ", expected);
}

void JsonFields::allow_only(std::initializer_list<std::string_view> allowed) const {
  if (object_.is_null()) return;
  for (const auto& [key, value] : object_.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (known) continue;
    std::string list;
    for (std::string_view a : allowed) {
      if (!list.empty()) list += ", ";
      list += a;
    }
    if (wording_ == JsonWording::config) {
      BATON_FAIL(source_, ": unknown field '", field_path(key),
                 "'; expected one of: ", list.empty() ? "(no fields)" : list);
    }
    BATON_FAIL(source_, ": unknown field '", field_path(key), "' (expected one of: ", list, ")");
  }
}

bool JsonFields::has(std::string_view key) const { return object_.is_object() && object_.contains(key); }

const nlohmann::json& JsonFields::at(std::string_view key) const {
  if (!has(key)) {
    if (wording_ == JsonWording::config) BATON_FAIL(source_, ": missing required field '", field_path(key), "'");
    fail(key, "a value (the field is missing)");
  }
  return *object_.find(key);
}

std::string JsonFields::string(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_string()) fail(key, "a string");
  return v.get<std::string>();
}

double JsonFields::number(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, "a finite number");
  return v.get<double>();
}

double JsonFields::non_negative(std::string_view key) const {
  return at_least_zero(*this, key, number(key), "a number >= 0");
}

int64_t JsonFields::integer(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_number_integer()) fail(key, "an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    fail(key, "an integer up to 9223372036854775807");
  }
  return v.get<int64_t>();
}

int64_t JsonFields::non_negative_integer(std::string_view key) const {
  return at_least_zero(*this, key, integer(key), "an integer >= 0");
}

int JsonFields::int32(std::string_view key) const {
  const int64_t x = integer(key);
  if (x < INT32_MIN || x > INT32_MAX) fail(key, "an integer from -2147483648 to 2147483647");
  return static_cast<int>(x);
}

std::vector<int> JsonFields::int32s(std::string_view key) const {
  std::vector<int> out;
  for (const int64_t x : integers(key)) {
    if (x < INT32_MIN || x > INT32_MAX) fail(key, "an array of integers from -2147483648 to 2147483647");
    out.push_back(static_cast<int>(x));
  }
  return out;
}

bool JsonFields::boolean(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = at(key);
  if (!v.is_boolean()) fail(key, "true or false");
  return v.get<bool>();
}

std::vector<double> JsonFields::numbers(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_array()) fail(key, "an array of numbers");
  std::vector<double> out;
  for (const nlohmann::json& x : v) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) fail(key, "an array of finite numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

std::vector<int64_t> JsonFields::integers(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_array()) fail(key, "an array of integers");
  std::vector<int64_t> out;
  for (const nlohmann::json& x : v) {
    if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
      fail(key, "an array of integers up to 9223372036854775807");
    }
    out.push_back(x.get<int64_t>());
  }
  return out;
}

std::vector<std::string> JsonFields::strings(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_array()) fail(key, "an array of strings");
  std::vector<std::string> out;
  for (const nlohmann::json& x : v) {
    if (!x.is_string()) fail(key, "an array of strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

std::vector<JsonFields> JsonFields::objects(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_array()) fail(key, "an array of objects");
  std::vector<JsonFields> out;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = field_path(key);
    p += '[';
    p += std::to_string(i);
    p += ']';
    out.emplace_back(v[i], source_, std::move(p), wording_);
  }
  return out;
}

JsonFields JsonFields::object(std::string_view key) const {
  return JsonFields(at(key), source_, field_path(key), wording_);
}

nlohmann::json read_json_file(const std::string& path, std::string_view what) {
  return parse_json_text(read_regular_file(path, path + ": cannot open the " + std::string(what)), path);
}

namespace {

// nlohmann's DOM builder, refusing duplicate keys and nesting deeper than kMaxJsonDepth as it goes.
// (Its callback parser would do the same, but rescans the enclosing object at the end of every
// member object: quadratic in a header of many tensors.)
class CheckedJsonBuilder : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;

 public:
  explicit CheckedJsonBuilder(nlohmann::json& out) : Base(out, /*allow_exceptions=*/true) {}

  bool start_object(std::size_t members) { return open_level() && Base::start_object(members); }
  bool start_array(std::size_t elements) { return open_level() && Base::start_array(elements); }
  bool end_object() { return close_level() && Base::end_object(); }
  bool end_array() { return close_level() && Base::end_array(); }
  bool key(std::string& name) {
    if (!keys_.back().insert(name).second) {
      problem = "the key '" + name + "' appears twice in one object";
      return false;
    }
    return Base::key(name);
  }

  std::string problem;  // empty while the text is acceptable

 private:
  bool open_level() {
    if (keys_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      problem = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    keys_.emplace_back();  // an array's set stays empty: the stack follows the nesting
    return true;
  }
  bool close_level() {
    keys_.pop_back();
    return true;
  }

  std::vector<std::unordered_set<std::string>> keys_;  // keys seen in each open object
};

}  // namespace

nlohmann::json parse_json_text(const std::string& text, std::string_view where) {
  nlohmann::json parsed;
  CheckedJsonBuilder builder(parsed);
  bool complete = false;
  try {
    complete = nlohmann::json::sax_parse(text, &builder);
  } catch (const nlohmann::json::exception& e) {
    BATON_FAIL(where, ": not valid JSON (", e.what(), ")");
  }
  BATON_CHECK(builder.problem.empty(), where, ": ", builder.problem);
  BATON_CHECK(complete, where, ": not valid JSON");
  return parsed;
}

void write_json_file(const std::string& path, const nlohmann::json& json) {
  write_file_atomically(path, json.dump(2) + "\n");
}

}  // namespace baton
