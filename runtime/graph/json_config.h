// Reading a layer's JSON config with errors that name the field and what was expected. Unknown
// fields are errors too, so a typo ("kernal_size") never passes silently.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/graph/layer.h"

namespace baton {

class JsonConfig {
 public:
  // `what` names the object in messages ("Conv2d config"); `allowed` lists every accepted field.
  JsonConfig(const nlohmann::json& config, std::string what, std::initializer_list<std::string_view> allowed);

  bool has(std::string_view field) const;
  int64_t get_int(std::string_view field) const;  // required
  int64_t get_int(std::string_view field, int64_t fallback) const;
  double get_double(std::string_view field, double fallback) const;
  double get_double(std::string_view field) const;
  bool get_bool(std::string_view field, bool fallback) const;
  std::string get_string(std::string_view field, const std::string& fallback) const;
  // An int or a pair of ints ([h, w]); a single int n gives {n, n}.
  std::array<int64_t, 2> get_pair(std::string_view field, std::array<int64_t, 2> fallback) const;
  std::array<int64_t, 2> get_pair(std::string_view field) const;
  // An initialiser override (see initializer_json); nullopt when the field is absent.
  std::optional<Initializer> get_initializer(std::string_view field) const;

 private:
  const nlohmann::json& field(std::string_view name) const;
  [[noreturn]] void fail(std::string_view field, std::string_view expected) const;

  const nlohmann::json& config_;
  std::string what_;
};

// The JSON form of an initialiser: {"constant": value}, {"uniform": [low, high]} or
// {"normal": [mean, std]} (layer configs' "weight_init" / "bias_init" overrides).
nlohmann::json initializer_json(const Initializer& init);

}  // namespace baton
