// `baton bench research`: it runs, prints the comparison, and every row is the planner's own prediction
// for that layout (re-evaluated here through evaluate_plan on the same profile), not a figure of its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "models/model_registry.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;
using namespace baton::parallel;  // NOLINT

using BenchResearch = CliTest;

TEST_F(BenchResearch, RowsAreThePlannersPredictionsForTheirLayouts) {
  const std::string cluster_file = std::string(BATON_SOURCE_DIR) + "/tools/clusters/v100-pcie-8.json";
  const fs::path json = dir_ / "research.json";
  const CliResult r =
      run_baton("bench research --models vgg16 --clusters " + cluster_file + " --batch 64 --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"data parallel", "pipeline (GPipe)", "hybrid (best G x S)", "vs DP", "split: features.0"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  const nlohmann::json j = nlohmann::json::parse(read_file_text(json));
  EXPECT_EQ(j["benchmark"], "research");
  EXPECT_EQ(j["predicted"], true);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["cluster"], "v100-pcie-8");
  const nlohmann::json& rows = j["results"][0]["rows"];
  ASSERT_EQ(rows.size(), 4u);

  // The profile the command documents: the cluster's device, batch sizes 1, 2, 4, ... up to the batch.
  const Cluster cluster = load_cluster(cluster_file);
  AnalyticOptions o;
  o.batch_sizes = {1, 2, 4, 8, 16, 32, 64};
  const Profile profile =
      analytic_profile(models::build_model("vgg16", models::default_options("vgg16")), "vgg16", cluster.device(0), o);
  PlanSettings settings;
  settings.batch = 64;
  settings.bucket_bytes = 25 << 20;  // the command's default --bucket-mb 25

  const char* layouts[] = {"data_parallel", "pipeline", "hybrid", "hybrid_gpipe"};
  double step_ms[4] = {};
  for (size_t i = 0; i < 4; ++i) {
    const nlohmann::json& row = rows[i];
    SCOPED_TRACE(row.dump());
    ASSERT_EQ(row["layout"], layouts[i]);
    ASSERT_EQ(row["feasible"], true);
    PlanChoice c;
    c.partitioner = row["partitioner"].get<std::string>();
    c.groups = row["groups"].get<int>();
    c.stages = row["stages"].get<int>();
    c.chunks = row["chunks"].get<int>();
    c.micro_batches = row["micro_batches"].get<int>();
    c.schedule = parse_schedule_kind(row["schedule"].get<std::string>());
    EXPECT_EQ(c.groups * c.stages, 8);
    const EvaluatedPlan e = evaluate_plan(c, profile, cluster, settings);
    step_ms[i] = row["step_ms"].get<double>();
    EXPECT_DOUBLE_EQ(step_ms[i], e.predicted.step_ms);
    EXPECT_DOUBLE_EQ(row["throughput"].get<double>(), e.predicted.throughput);
    EXPECT_DOUBLE_EQ(row["bubble_fraction"].get<double>(), e.predicted.bubble_fraction);
    ASSERT_EQ(row["stage_split"].size(), e.table.size());
    size_t nodes = 0;
    for (const nlohmann::json& s : row["stage_split"]) nodes += s["nodes"].get<size_t>();
    EXPECT_EQ(nodes, static_cast<size_t>(profile.num_nodes()));
  }
  EXPECT_EQ(rows[0]["stages"], 1);
  EXPECT_EQ(rows[1]["groups"], 1);
  EXPECT_EQ(rows[1]["schedule"], "gpipe");
  EXPECT_GE(rows[2]["groups"].get<int>(), 2);
  EXPECT_GE(rows[2]["stages"].get<int>(), 2);
  EXPECT_EQ(rows[3]["schedule"], "gpipe");
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(rows[i]["speedup_over_data_parallel"].get<double>(), step_ms[0] / step_ms[i]);
    EXPECT_DOUBLE_EQ(rows[i]["speedup_over_pipeline"].get<double>(), step_ms[1] / step_ms[i]);
  }
  // The best hybrid is the fastest the search found: no slower than its GPipe-only row or another hybrid.
  EXPECT_LE(step_ms[2], step_ms[3]);
  PlanChoice other;
  other.groups = 2;
  other.stages = 4;
  other.micro_batches = 8;
  EXPECT_LE(step_ms[2], evaluate_plan(other, profile, cluster, settings).predicted.step_ms);
}

TEST_F(BenchResearch, BadInputIsOneLine) {
  expect_one_line_error("bench research --models vgg16", "--clusters");
  expect_one_line_error("bench research --models vgg16 --clusters no-such-cluster",
                        "unknown cluster 'no-such-cluster'");
  expect_one_line_error("bench research --models vgg16 --clusters pcie-8 --gpus 3", "--gpus 3");
}

}  // namespace
}  // namespace baton::cli
