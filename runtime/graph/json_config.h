// Reading a layer's JSON config: JsonFields worded for small settings objects, plus int-or-pair
// fields and initialiser overrides.
#pragma once

#include <array>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/graph/json_fields.h"
#include "runtime/graph/layer.h"

namespace baton {

// A layer's (or an optimiser's) settings read through JsonFields with the config wording, plus the
// shapes only layer configs use (an int or a pair; an initialiser override).
class JsonConfig : public JsonFields {
 public:
  // `what` names the object in messages ("Conv2d config"); `allowed` lists every accepted field.
  JsonConfig(const nlohmann::json& config, std::string what, std::initializer_list<std::string_view> allowed);

  int64_t get_int(std::string_view field) const { return integer(field); }  // required
  int64_t get_int(std::string_view field, int64_t fallback) const { return integer(field, fallback); }
  // An int field (32 bits) of at least `minimum`: larger or smaller values are errors naming the
  // field, never truncated or wrapped around.
  int get_int32(std::string_view field, int fallback, int minimum) const;
  // A count of at least 0 stored unsigned (a seed): negative values are errors, not wrapped.
  uint64_t get_non_negative(std::string_view field, uint64_t fallback) const;
  double get_double(std::string_view field) const { return number(field); }
  double get_double(std::string_view field, double fallback) const { return number(field, fallback); }
  bool get_bool(std::string_view field, bool fallback) const { return boolean(field, fallback); }
  std::string get_string(std::string_view field, const std::string& fallback) const { return string(field, fallback); }
  // An int or a pair of ints ([h, w]); a single int n gives {n, n}.
  std::array<int64_t, 2> get_pair(std::string_view field, std::array<int64_t, 2> fallback) const;
  std::array<int64_t, 2> get_pair(std::string_view field) const;
  // An initialiser override (see initializer_json); nullopt when the field is absent.
  std::optional<Initializer> get_initializer(std::string_view field) const;
};

// [a, b]: a kernel size, stride, padding or dilation pair in a layer config.
nlohmann::json pair_json(const std::array<int64_t, 2>& pair);

// The JSON form of an initialiser: {"constant": value}, {"uniform": [low, high]} or
// {"normal": [mean, std]} (layer configs' "weight_init" / "bias_init" overrides).
nlohmann::json initializer_json(const Initializer& init);

}  // namespace baton
