// LoaderPosition's JSON form.
#include "runtime/data/loader_position.h"

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"

namespace baton::data {
namespace {

int64_t read_count(const nlohmann::json& json, const char* field) {
  const auto it = json.find(field);
  BATON_CHECK(it != json.end(), "loader position ", json.dump(), ": the field '", field, "' is missing");
  BATON_CHECK(it->is_number_integer() && it->get<int64_t>() >= 0, "loader position ", json.dump(), ": '", field,
              "' must be a non-negative integer, not ", it->dump());
  return it->get<int64_t>();
}

}  // namespace

void to_json(nlohmann::json& json, const LoaderPosition& position) {
  json = nlohmann::json{{"epoch", position.epoch}, {"next_batch", position.next_batch}};
}

void from_json(const nlohmann::json& json, LoaderPosition& position) {
  BATON_CHECK(json.is_object(), "loader position: expected an object {\"epoch\": E, \"next_batch\": B}, not ",
              json.dump());
  for (auto it = json.begin(); it != json.end(); ++it) {
    BATON_CHECK(it.key() == "epoch" || it.key() == "next_batch", "loader position ", json.dump(), ": unknown field '",
                it.key(), "'; expected only epoch and next_batch");
  }
  position.epoch = read_count(json, "epoch");
  position.next_batch = read_count(json, "next_batch");
}

}  // namespace baton::data
