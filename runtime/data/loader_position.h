// LoaderPosition: where a DataLoader stands (the next batch it will return), and its JSON form
// {"epoch": E, "next_batch": B} for checkpoints.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>

namespace baton::data {

struct LoaderPosition {
  int64_t epoch = 0;
  int64_t next_batch = 0;  // batches_per_epoch() means "the end of `epoch`": next() returns nullopt
  bool operator==(const LoaderPosition& other) const = default;
};

// For nlohmann::json (json j = position; j.get<LoaderPosition>()). Reading checks for exactly the
// two fields as non-negative integers; errors name the field and what was expected.
void to_json(nlohmann::json& json, const LoaderPosition& position);
void from_json(const nlohmann::json& json, LoaderPosition& position);

}  // namespace baton::data
