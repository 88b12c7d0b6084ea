// Comparing the graph a checkpoint stores (its "model_spec", Graph::to_json) with the graph of the
// run resuming it, so that a spec edited between the runs is refused with its first difference.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace baton {

// The first difference between two graphs as Graph::to_json writes them, in words ("layer 'act1'
// (number 3), field 'type': Relu in the checkpoint, Sigmoid now"), or "" when they are the same.
// Layer parameters a resumed run may change (label_smoothing, with a warning) are not compared.
std::string first_graph_difference(const nlohmann::json& stored, const nlohmann::json& now);

// Throws naming the checkpoint and the first difference unless `stored` (null: a checkpoint saved
// without its graph, not compared) and `now` are the same graph.
void check_same_graph(const nlohmann::json& stored, const nlohmann::json& now, const std::string& checkpoint);

}  // namespace baton
