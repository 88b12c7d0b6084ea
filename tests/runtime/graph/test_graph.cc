// Graph construction, checks, topological order and JSON round trip / errors.
#include <gtest/gtest.h>

#include "runtime/core/error.h"
#include "runtime/graph/graph.h"
#include "tests/runtime/graph/host_layers.h"

namespace baton {
namespace {

using testing::HostAdd;
using testing::HostAffine;
using testing::HostShift;
using testing::HostSquareSum;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Graph, InfersShapesAndOrdersNodes) {
  const Graph g = testing::residual_host_graph(4);
  g.validate();
  EXPECT_EQ(g.value(g.value_id("a3")).shape, (Shape{4, 3}));
  EXPECT_EQ(g.value(g.value_id("loss")).shape, Shape{});
  const std::vector<NodeId> order = g.topological_order();
  ASSERT_EQ(order.size(), 6u);
  auto pos = [&](const char* name) { return std::find(order.begin(), order.end(), g.node_id(name)) - order.begin(); };
  EXPECT_LT(pos("a1"), pos("shift"));
  EXPECT_LT(pos("a2"), pos("sum"));
  EXPECT_LT(pos("sum"), pos("a3"));
  EXPECT_EQ(g.value(g.value_id("a1")).consumers.size(), 2u);
}

TEST(Graph, ErrorsNameTheNodeOrValue) {
  Graph g;
  const ValueId x = g.add_input("x", Shape{4, 3}, DType::f64);
  const ValueId y = g.add_input("y", Shape{4, 5}, DType::f64);
  EXPECT_NE(error_of([&] {
              g.add_node("bad_add", std::make_shared<HostAdd>(), {x, y});
            }).find("in node 'bad_add'"),
            std::string::npos);
  g.add_node("a", std::make_shared<HostAffine>(), {x});
  EXPECT_NE(error_of([&] { g.add_node("a", std::make_shared<HostAffine>(), {x}); }).find("duplicate node name 'a'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_input("x", Shape{1}, DType::f32); }).find("duplicate value name 'x'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_node("two", std::make_shared<HostAdd>(), {x}); }).find("takes 2 inputs, got 1"),
            std::string::npos);
  g.mark_output(g.value_id("a"));
  EXPECT_NE(error_of([&] { g.validate(); }).find("graph input 'y' is not used"), std::string::npos);
}

TEST(Graph, DanglingValueIsAnError) {
  Graph g;
  const ValueId x = g.add_input("x", Shape{2, 2}, DType::f64);
  const ValueId a = g.add_node("a", std::make_shared<HostAffine>(), {x})[0];
  g.add_node("unused", std::make_shared<HostShift>(), {a});
  g.mark_output(a);
  EXPECT_NE(error_of([&] { g.validate(); }).find("value 'unused' is produced but neither used nor a graph output"),
            std::string::npos);
}

TEST(Graph, JsonRoundTripRebuildsAnIdenticalGraph) {
  const Graph g = testing::residual_host_graph(4);
  const nlohmann::json j = g.to_json();
  const Graph back = Graph::from_json(j, testing::host_layer_registry(), "test.json");
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.num_nodes(), g.num_nodes());
  // Layers listed in reverse order still build.
  nlohmann::json reversed = j;
  std::reverse(reversed["layers"].begin(), reversed["layers"].end());
  EXPECT_EQ(Graph::from_json(reversed, testing::host_layer_registry(), "r.json").to_json(), j);
}

TEST(Graph, BadJsonIsAnErrorNamingFileAndField) {
  const nlohmann::json good = testing::residual_host_graph(4).to_json();
  const LayerRegistry& reg = testing::host_layer_registry();
  auto err = [&](const nlohmann::json& j) { return error_of([&] { Graph::from_json(j, reg, "model.json"); }); };
  nlohmann::json unknown_type = good;
  unknown_type["layers"][0]["type"] = "Conv9d";
  EXPECT_NE(err(unknown_type).find("unknown layer type 'Conv9d'"), std::string::npos);
  EXPECT_NE(err(unknown_type).find("model.json: layer 'a1'"), std::string::npos);
  nlohmann::json missing_value = good;
  missing_value["layers"][1]["inputs"] = {"nothing"};
  EXPECT_NE(err(missing_value).find("reads value 'nothing', which no input or layer defines"), std::string::npos);
  nlohmann::json cycle = good;
  cycle["layers"][0]["inputs"] = {"a3"};
  EXPECT_NE(err(cycle).find("form a cycle"), std::string::npos);
  nlohmann::json extra = good;
  extra["layers"][0]["param"] = nlohmann::json::object();
  EXPECT_NE(err(extra).find("unknown field 'param'"), std::string::npos);
  nlohmann::json bad_dtype = good;
  bad_dtype["inputs"][0]["dtype"] = "float";
  EXPECT_NE(err(bad_dtype).find("unknown dtype 'float'"), std::string::npos);
  nlohmann::json bad_output = good;
  bad_output["outputs"] = {"nope"};
  EXPECT_NE(err(bad_output).find("output \"nope\" is not a value"), std::string::npos);
  EXPECT_NE(err(nlohmann::json::array()).find("must be a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace baton
