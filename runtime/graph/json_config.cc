// JsonConfig: typed field reads of a layer's JSON config (ints, pairs, initializers) that reject
// unknown fields and name the field and the expected type on error.
#include "runtime/graph/json_config.h"

#include "runtime/core/error.h"

namespace baton {

JsonConfig::JsonConfig(const nlohmann::json& config, std::string what, std::initializer_list<std::string_view> allowed)
    : JsonFields(config, what, "", JsonWording::config) {
  allow_only(allowed);
}

std::array<int64_t, 2> JsonConfig::get_pair(std::string_view name) const {
  const nlohmann::json& v = at(name);
  if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
  if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
    return {v[0].get<int64_t>(), v[1].get<int64_t>()};
  }
  fail(name, "an integer or a list of two integers");
}

std::array<int64_t, 2> JsonConfig::get_pair(std::string_view name, std::array<int64_t, 2> fallback) const {
  return has(name) ? get_pair(name) : fallback;
}

std::optional<Initializer> JsonConfig::get_initializer(std::string_view name) const {
  if (!has(name)) return std::nullopt;
  const nlohmann::json& v = at(name);
  constexpr std::string_view expected =
      R"({"constant": value}, {"uniform": [low, high]} with low <= high, or {"normal": [mean, std]} with std >= 0)";
  if (!v.is_object() || v.size() != 1) fail(name, expected);
  const std::string kind = v.begin().key();
  const nlohmann::json& args = v.front();
  if (kind == "constant") {
    if (!args.is_number()) fail(name, expected);
    return Initializer::constant(args.get<double>());
  }
  if ((kind != "uniform" && kind != "normal") || !args.is_array() || args.size() != 2 || !args[0].is_number() ||
      !args[1].is_number()) {
    fail(name, expected);
  }
  const double a = args[0].get<double>(), b = args[1].get<double>();
  if (kind == "uniform") {
    if (a > b) fail(name, expected);
    return Initializer::uniform(a, b);
  }
  if (b < 0) fail(name, expected);
  return Initializer::normal(a, b);
}

nlohmann::json initializer_json(const Initializer& init) {
  switch (init.kind) {
    case Initializer::Kind::constant:
      return {{"constant", init.a}};
    case Initializer::Kind::uniform:
      return {{"uniform", {init.a, init.b}}};
    case Initializer::Kind::normal:
      return {{"normal", {init.a, init.b}}};
  }
  BATON_FAIL("initializer_json: unknown initializer kind ", static_cast<int>(init.kind));
}

int JsonConfig::get_int32(std::string_view field, int fallback, int minimum) const {
  const int64_t value = get_int(field, fallback);
  if (value < minimum || value > INT32_MAX)
    fail(field, "an integer from " + std::to_string(minimum) + " to 2147483647");
  return static_cast<int>(value);
}

uint64_t JsonConfig::get_non_negative(std::string_view field, uint64_t fallback) const {
  if (!has(field)) return fallback;
  const int64_t value = get_int(field);
  if (value < 0) fail(field, "an integer >= 0");
  return static_cast<uint64_t>(value);
}

nlohmann::json pair_json(const std::array<int64_t, 2>& pair) { return nlohmann::json::array({pair[0], pair[1]}); }

}  // namespace baton
