// JsonConfig implementation.
#include "runtime/graph/json_config.h"

#include "runtime/core/error.h"

namespace baton {

JsonConfig::JsonConfig(const nlohmann::json& config, std::string what, std::initializer_list<std::string_view> allowed)
    : config_(config), what_(std::move(what)) {
  BATON_CHECK(config.is_object() || config.is_null(), what_, ": expected a JSON object, got ", config.type_name());
  if (config.is_null()) return;
  for (const auto& [key, value] : config.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) {
      std::string names;
      for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      BATON_FAIL(what_, ": unknown field '", key, "'; expected one of: ", names.empty() ? "(no fields)" : names);
    }
  }
}

bool JsonConfig::has(std::string_view name) const { return config_.is_object() && config_.contains(name); }

const nlohmann::json& JsonConfig::field(std::string_view name) const {
  if (!has(name)) BATON_FAIL(what_, ": missing required field '", name, "'");
  return config_.at(std::string(name));
}

void JsonConfig::fail(std::string_view name, std::string_view expected) const {
  const nlohmann::json& v = config_.at(std::string(name));
  BATON_FAIL(what_, ": field '", name, "' is ", v.dump(), ", expected ", expected);
}

int64_t JsonConfig::get_int(std::string_view name) const {
  const nlohmann::json& v = field(name);
  if (!v.is_number_integer()) fail(name, "an integer");
  return v.get<int64_t>();
}

int64_t JsonConfig::get_int(std::string_view name, int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}

double JsonConfig::get_double(std::string_view name) const {
  const nlohmann::json& v = field(name);
  if (!v.is_number()) fail(name, "a number");
  return v.get<double>();
}

double JsonConfig::get_double(std::string_view name, double fallback) const {
  return has(name) ? get_double(name) : fallback;
}

bool JsonConfig::get_bool(std::string_view name, bool fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& v = field(name);
  if (!v.is_boolean()) fail(name, "true or false");
  return v.get<bool>();
}

std::string JsonConfig::get_string(std::string_view name, const std::string& fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& v = field(name);
  if (!v.is_string()) fail(name, "a string");
  return v.get<std::string>();
}

std::array<int64_t, 2> JsonConfig::get_pair(std::string_view name) const {
  const nlohmann::json& v = field(name);
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
  const nlohmann::json& v = field(name);
  constexpr std::string_view expected =
      R"({"constant": value}, {"uniform": [low, high]} with low <= high, or {"normal": [mean, std]} with std >= 0)";
  if (!v.is_object() || v.size() != 1) fail(name, expected);
  const std::string kind = v.begin().key();
  const nlohmann::json& args = v.begin().value();
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
    case Initializer::Kind::constant: return {{"constant", init.a}};
    case Initializer::Kind::uniform: return {{"uniform", {init.a, init.b}}};
    case Initializer::Kind::normal: return {{"normal", {init.a, init.b}}};
  }
  BATON_FAIL("initializer_json: unknown initializer kind ", static_cast<int>(init.kind));
}

}  // namespace baton
