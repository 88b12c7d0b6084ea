// Profiles (JSON, interpolation, structure from a graph, analytic and measured), cluster
// descriptions, the communication cost model, plans and the uniform partitioner.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/model_registry.h"
#include "models/model_summary.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/cluster.h"
#include "parallel/plan/cost_model.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/profiler.h"
#include "runtime/graph/json_fields.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

Graph small_resnet(int64_t batch = 4) {
  models::ModelOptions o;
  o.batch_size = batch;
  o.num_classes = 10;
  o.image_size = 32;
  return models::build_model("resnet20", o);
}

TEST(ProfileStructure, MatchesTheGraphSummary) {
  const Graph g = small_resnet();
  const Profile p = profile_structure(g, "resnet20");
  const models::GraphSummary s = models::summarize(g);
  ASSERT_EQ(p.num_nodes(), static_cast<int>(s.nodes.size()));
  int64_t params = 0;
  for (int n = 0; n < p.num_nodes(); ++n) {
    EXPECT_EQ(p.nodes[n].name, s.nodes[n].name);
    params += p.nodes[n].param_bytes;
  }
  EXPECT_EQ(params, s.params * 4);
  // The input image: 3 x 32 x 32 floats per sample, read by the stem.
  const ProfiledValue& x = p.values[g.value_id("x")];
  EXPECT_EQ(x.bytes_per_sample, 3 * 32 * 32 * 4);
  EXPECT_EQ(x.producer, -1);
  ASSERT_FALSE(x.consumers.empty());
  EXPECT_EQ(x.consumers.front(), 0);
}

TEST(AnalyticProfile, TimesGrowWithBatchAndFollowThePeakRates) {
  const Graph g = small_resnet();
  AnalyticOptions o;
  o.batch_sizes = {1, 64};
  const Profile h200 = analytic_profile(g, "resnet20", device_spec_by_name("h200"), o);
  const Profile v100 = analytic_profile(g, "resnet20", device_spec_by_name("v100-sxm"), o);
  double h1 = 0, h64 = 0, v64 = 0;
  for (int n = 0; n < h200.num_nodes(); ++n) {
    h1 += h200.nodes[n].fwd_ms[0];
    h64 += h200.nodes[n].fwd_ms[1];
    v64 += v100.nodes[n].fwd_ms[1];
    EXPECT_GT(h200.nodes[n].bwd_ms[1], h200.nodes[n].fwd_ms[1]) << h200.nodes[n].name;
  }
  EXPECT_GT(h64, h1);
  EXPECT_LT(h64, 64 * h1);  // fixed per-kernel overhead: not linear in the batch
  EXPECT_GT(v64, h64);
  EXPECT_GT(h200.optimizer_ms_per_param_byte, 0);
}

TEST(Profile, InterpolatesBetweenAndScalesBeyondMeasuredSizes) {
  Profile p;
  p.batch_sizes = {2, 8};
  p.nodes.push_back({"a", "Linear", {0}, {1}, {1.0, 4.0}, {3.0, 9.0}, 0, 0, 0, 0});
  p.values.push_back({"x", -1, {0}, 4, false});
  p.values.push_back({"a", 0, {}, 4, true});
  p.validate("test");
  EXPECT_DOUBLE_EQ(p.fwd_ms(0, 2), 1.0);
  EXPECT_DOUBLE_EQ(p.fwd_ms(0, 5), 2.5);
  EXPECT_DOUBLE_EQ(p.fwd_ms(0, 16), 8.0);
  EXPECT_DOUBLE_EQ(p.fwd_ms(0, 1), 0.5);
  EXPECT_DOUBLE_EQ(p.bwd_ms(0, 4), 5.0);
}

TEST(Profile, JsonRoundTripAndClearErrors) {
  const Graph g = small_resnet();
  AnalyticOptions o;
  o.batch_sizes = {4, 16};
  const Profile p = analytic_profile(g, "resnet20", device_spec_by_name("a100-sxm"), o);
  const nlohmann::json j = profile_to_json(p);
  const Profile back = profile_from_json(j, "p.json");
  EXPECT_EQ(profile_to_json(back), j);

  const std::string path = (std::filesystem::temp_directory_path() / "baton_profile_test.json").string();
  save_profile(p, path);
  EXPECT_EQ(profile_to_json(load_profile(path)), j);
  std::filesystem::remove(path);

  nlohmann::json bad = j;
  bad["nodes"][3]["fwd_ms"] = "fast";
  EXPECT_ERROR_MENTIONS("p.json: field 'nodes[3].fwd_ms': expected an array of numbers",
                        profile_from_json(bad, "p.json"));
  bad = j;
  bad["nodes"][2]["fwd_ms"] = {1.0};
  EXPECT_ERROR_MENTIONS("one fwd_ms and one bwd_ms per batch size", profile_from_json(bad, "p.json"));
  bad = j;
  bad["nodes"][0]["speed"] = 1;
  EXPECT_ERROR_MENTIONS("unknown field 'nodes[0].speed'", profile_from_json(bad, "p.json"));
  bad = j;
  bad["format"] = "baton.profile/9";
  EXPECT_ERROR_MENTIONS("expected \"baton.profile/1\"", profile_from_json(bad, "p.json"));
  bad = j;
  std::swap(bad["nodes"][1], bad["nodes"][2]);
  EXPECT_ERROR_MENTIONS("p.json: node", profile_from_json(bad, "p.json"));
  bad = j;
  bad["nodes"][1]["param_bytes"] = 1e300;  // found by fuzzing: converting it to an integer was undefined
  EXPECT_ERROR_MENTIONS("field 'nodes[1].param_bytes': expected an integer", profile_from_json(bad, "p.json"));
  bad = j;
  bad["values"][0]["consumers"] = {int64_t{1} << 32 | 1};  // must not wrap round to value 1
  EXPECT_ERROR_MENTIONS("field 'values[0].consumers': expected an array of integers from",
                        profile_from_json(bad, "p.json"));
  EXPECT_ERROR_MENTIONS("cannot open", load_profile("/nonexistent/profile.json"));
}

TEST(MeasuredProfile, TimesEveryNodeOnTheCpu) {
  const Graph g = small_resnet(2);
  ProfilerOptions o;
  o.batch_sizes = {2, 4};
  o.warmup = 1;
  o.repeats = 3;
  const Profile p = measure_profile(g, "resnet20", Device::cpu(), o);
  EXPECT_EQ(p.source, "measured");
  double total = 0;
  int timed = 0;
  for (const ProfiledNode& n : p.nodes) {
    ASSERT_EQ(n.fwd_ms.size(), 2u);
    EXPECT_GE(n.fwd_ms[0], 0);
    total += n.fwd_ms[1] + n.bwd_ms[1];
    timed += n.fwd_ms[1] > 0;
  }
  EXPECT_GT(total, 0);
  EXPECT_GT(timed, p.num_nodes() / 2);
  EXPECT_GT(p.optimizer_ms_per_param_byte, 0);
}

TEST(Cluster, CommunicationCostsFollowTheAlphaBetaModel) {
  const Cluster c = Cluster::topology("t", device_spec_by_name("h200"), 2, 4, {"nvlink", 100, 2}, {"network", 10, 20});
  EXPECT_EQ(c.num_devices(), 8);
  EXPECT_EQ(c.node_of(5), 1);
  EXPECT_DOUBLE_EQ(c.p2p_ms(0, 0, 1), 0);
  EXPECT_DOUBLE_EQ(c.p2p_ms(1000, 3, 3), 0);
  EXPECT_NEAR(c.p2p_ms(int64_t{100'000'000}, 0, 1), 1.0 + 0.002, 1e-12);
  EXPECT_NEAR(c.p2p_ms(int64_t{100'000'000}, 0, 4), 10.0 + 0.020, 1e-12);
  const int64_t s = 400'000'000;
  const std::vector<int> four = {0, 1, 2, 3};
  // 2(n-1)/n * S/B + 2(n-1) * latency
  EXPECT_NEAR(c.allreduce_ms(s, four), 2.0 * 3 / 4 * 4.0 + 2 * 3 * 0.002, 1e-9);
  const std::vector<int> across = {0, 4};
  EXPECT_NEAR(c.allreduce_ms(s, across), 2.0 * 1 / 2 * 40.0 + 2 * 0.020, 1e-9);
  EXPECT_NEAR(c.allreduce_ms(s, four, AllReduceAlgorithm::tree), 2 * 4.0 + 2 * 2 * 0.002, 1e-9);
  EXPECT_DOUBLE_EQ(c.allreduce_ms(s, std::vector<int>{2}), 0);
}

TEST(Cluster, ShippedAndJsonDescriptions) {
  for (const char* name : {"h200-nvlink-8", "pcie-8", "h200-2x8", "cpu-4"}) {
    const Cluster c = cluster_by_name(name);
    EXPECT_GE(c.num_devices(), 4) << name;
    const Cluster back = cluster_from_json(cluster_to_json(c), "c.json");
    EXPECT_EQ(cluster_to_json(back), cluster_to_json(c)) << name;
  }
  EXPECT_GT(cluster_by_name("h200-nvlink-8").link(0, 7).bandwidth_gbs,
            cluster_by_name("pcie-8").link(0, 7).bandwidth_gbs);
  EXPECT_GT(cluster_by_name("h200-2x8").p2p_ms(1 << 20, 0, 8), cluster_by_name("h200-2x8").p2p_ms(1 << 20, 0, 7));
  EXPECT_ERROR_MENTIONS("unknown cluster 'tpu-pod'", cluster_by_name("tpu-pod"));
  const nlohmann::json j = {{"name", "mine"},
                            {"device", "a100-sxm"},
                            {"nodes", 2},
                            {"gpus_per_node", 2},
                            {"intra", {{"kind", "nvlink"}, {"bandwidth_gbs", 200}, {"latency_us", 3}}}};
  EXPECT_ERROR_MENTIONS("c.json: field 'inter': expected a link between machines", cluster_from_json(j, "c.json"));
  nlohmann::json ok = j;
  ok["inter"] = {{"kind", "network"}, {"bandwidth_gbs", 12.5}, {"latency_us", 8}};
  ok["links"] = {{{"from", 0}, {"to", 1}, {"kind", "pcie"}, {"bandwidth_gbs", 20}}};
  const Cluster c = cluster_from_json(ok, "c.json");
  EXPECT_EQ(c.num_devices(), 4);
  EXPECT_EQ(c.link(1, 0).kind, "pcie");
  EXPECT_DOUBLE_EQ(c.link(2, 3).bandwidth_gbs, 200);
  EXPECT_DOUBLE_EQ(c.link(1, 2).bandwidth_gbs, 12.5);
  ok["links"][0]["to"] = 9;
  EXPECT_ERROR_MENTIONS("field 'links[0].to': expected a device id in 0..3", cluster_from_json(ok, "c.json"));
}

// A diamond: a -> (b, c) -> d, every value 10 bytes per sample.
Profile diamond() {
  Profile p;
  p.batch_sizes = {1};
  p.values = {{"x", -1, {0}, 10, false},
              {"a", 0, {1, 2}, 10, false},
              {"b", 1, {3}, 10, false},
              {"c", 2, {3}, 10, false},
              {"d", 3, {}, 10, true}};
  p.nodes = {{"a", "T", {0}, {1}, {1}, {2}, 100, 5, 0, 0},
             {"b", "T", {1}, {2}, {1}, {2}, 0, 5, 0, 0},
             {"c", "T", {1}, {3}, {1}, {2}, 0, 5, 64, 0},
             {"d", "T", {2, 3}, {4}, {1}, {2}, 50, 5, 0, 0}};
  p.validate("diamond");
  return p;
}

TEST(CostModel, CutsStagesAndMemory) {
  const Profile p = diamond();
  EXPECT_EQ(cut_bytes(p, 1), 10);  // a
  EXPECT_EQ(cut_bytes(p, 2), 20);  // a (read by c) and b
  EXPECT_EQ(cut_bytes(p, 3), 20);  // b, c
  std::vector<char> in = {1, 1, 0, 0};
  EXPECT_EQ(boundary_bytes_out(p, in), 20);
  EXPECT_EQ(boundary_bytes_in(p, std::vector<char>{0, 0, 1, 1}), 20);
  const std::vector<int> all = {0, 1, 2, 3};
  const StageMemory m = stage_memory(p, all, 4, 3);
  EXPECT_EQ(m.params, 150);
  EXPECT_EQ(m.gradients, 150);
  EXPECT_EQ(m.optimizer_state, 150);
  EXPECT_EQ(m.activations, (4 * 10 + 4 * 5) * 4 * 3);
  EXPECT_EQ(m.workspace, 64);
}

TEST(Plan, ValidationNamesTheProblem) {
  const Profile p = diamond();
  Plan plan;
  plan.batch = 8;
  plan.micro_batches = 2;
  plan.stages = {{{0, 1}, 1, {}}, {{2, 3}, 1, {}}};
  assign_devices(plan);
  validate_plan(plan, p);
  EXPECT_EQ(stage_consumers(plan, p), (std::vector<std::vector<int>>{{1}, {}}));
  EXPECT_EQ(plan_to_json(plan_from_json(plan_to_json(plan, p), p, "plan.json"), p), plan_to_json(plan, p));

  Plan backwards = plan;
  backwards.stages = {{{0, 2}, 1, {0}}, {{1, 3}, 1, {1}}};
  validate_plan(backwards, p);  // b and c are independent: any order of them is fine
  backwards.stages = {{{0, 3}, 1, {0}}, {{1, 2}, 1, {1}}};
  EXPECT_ERROR_MENTIONS("flows backwards", validate_plan(backwards, p));
  Plan missing = plan;
  missing.stages[1].nodes = {2};
  EXPECT_ERROR_MENTIONS("node 'd' is in no stage", validate_plan(missing, p));
  Plan uneven = plan;
  uneven.micro_batches = 3;
  EXPECT_ERROR_MENTIONS("must be divisible by the number of micro-batches", validate_plan(uneven, p));

  Plan hybrid = plan;
  for (Stage& s : hybrid.stages) s.replicas = 2;
  assign_devices(hybrid);
  EXPECT_EQ(hybrid.stages[0].devices, (std::vector<int>{0, 2}));
  EXPECT_EQ(hybrid.stages[1].devices, (std::vector<int>{1, 3}));
  EXPECT_EQ(hybrid.num_devices(), 4);
}

TEST(UniformPartitioner, EqualNodeCountsAndClearErrors) {
  const Graph g = small_resnet();
  const Profile p = analytic_profile(g, "resnet20", device_spec_by_name("h200"));
  const Cluster c = cluster_by_name("h200-nvlink-8");
  PartitionRequest r;
  r.profile = &p;
  r.cluster = &c;
  r.stages = 4;
  r.batch = 64;
  r.micro_batches = 4;
  const Plan plan = partition_uniform(r);
  ASSERT_EQ(plan.num_stages(), 4);
  size_t smallest = 1000, largest = 0;
  for (const Stage& s : plan.stages) {
    smallest = std::min(smallest, s.nodes.size());
    largest = std::max(largest, s.nodes.size());
  }
  EXPECT_LE(largest - smallest, 1u);
  const std::vector<StageSummary> table = stage_table(plan, p);
  EXPECT_GT(table[0].fwd_ms, 0);
  EXPECT_GT(table[0].boundary_bytes_out, 0);
  EXPECT_EQ(table[3].boundary_bytes_out, 0);
  r.stages = p.num_nodes() + 1;
  EXPECT_ERROR_MENTIONS("every stage needs at least one node", partition_uniform(r));
  r.stages = 4;
  r.replicas = 4;
  EXPECT_ERROR_MENTIONS("needs 16 devices but cluster 'h200-nvlink-8' has 8", partition_uniform(r));
  r.replicas = 1;
  r.memory_cap_bytes = 1000;
  EXPECT_ERROR_MENTIONS("over the memory cap", partition_uniform(r));
}

}  // namespace
}  // namespace baton::parallel
