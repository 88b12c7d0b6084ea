// `baton profile` and `baton plan` run as a user runs them: the stage table, --json with the
// documented fields, --search's ranking, a Chrome trace, and clear errors for bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

using PlanCommand = CliTest;

TEST_F(PlanCommand, JsonHasTheDocumentedFields) {
  const CliResult r =
      run_baton("plan --model resnet50 --stages 4 --groups 2 --micro-batches 8 --partitioner block --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["nodes"].is_array());
  EXPECT_EQ(j["nodes"][0]["name"], "conv1");
  for (const char* field : {"name", "fwd_ms", "bwd_ms", "activation_bytes", "param_bytes"}) {
    EXPECT_TRUE(j["nodes"][0].contains(field)) << field;
  }
  ASSERT_EQ(j["stages"].size(), 4u);
  size_t nodes = 0;
  for (const nlohmann::json& s : j["stages"]) {
    for (const char* field : {"nodes", "fwd_ms", "bwd_ms", "param_bytes", "memory_bytes", "replicas"}) {
      EXPECT_TRUE(s.contains(field)) << field;
    }
    EXPECT_EQ(s["replicas"], 2);
    nodes += s["nodes"].size();
  }
  EXPECT_EQ(nodes, j["nodes"].size());
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["micro_batches"], 8);
  const nlohmann::json& p = j["predicted"];
  EXPECT_GT(p["step_ms"].get<double>(), 0);
  EXPECT_GT(p["throughput"].get<double>(), 0);
  EXPECT_GE(p["bubble_fraction"].get<double>(), 0);
  EXPECT_LT(p["bubble_fraction"].get<double>(), 1);
  EXPECT_GT(p["speedup"].get<double>(), 1);  // 8 devices beat one
  EXPECT_FALSE(j.contains("ranking"));
}

TEST_F(PlanCommand, SearchRanksPlansIncludingDataParallelAndPipeline) {
  const fs::path trace = dir_ / "trace.json";
  const CliResult r = run_baton("plan --model resnet50 --gpus 4 --search --json --trace " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["ranking"].is_array());
  bool data_parallel = false, pipeline = false;
  double previous = 0;
  for (const nlohmann::json& e : j["ranking"]) {
    if (!e["feasible"].get<bool>()) continue;
    const double ms = e["predicted"]["step_ms"].get<double>();
    EXPECT_GE(ms, previous);
    previous = ms;
    data_parallel = data_parallel || (e["stages"] == 1 && e["groups"] == 4);
    pipeline = pipeline || (e["stages"] == 4 && e["groups"] == 1);
  }
  EXPECT_TRUE(data_parallel);
  EXPECT_TRUE(pipeline);
  EXPECT_DOUBLE_EQ(j["predicted"]["step_ms"].get<double>(), j["ranking"][0]["predicted"]["step_ms"].get<double>());
  const nlohmann::json t = nlohmann::json::parse(read_file_text(trace));
  ASSERT_TRUE(t["traceEvents"].is_array());
  EXPECT_GT(t["traceEvents"].size(), 4u);

  const CliResult table = run_baton("plan --model vgg16 --gpus 8 --cluster pcie-8 --search");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("[data parallel]"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("speedup"), std::string::npos) << table.out;
}

TEST_F(PlanCommand, ProfileFileFeedsThePlanner) {
  const fs::path profile = dir_ / "r20.json";
  CliResult r =
      run_baton("profile --model resnet20 --device cpu --batch 4 --repeats 1 --warmup 0 --out " + profile.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_baton("plan --profile " + profile.string() + " --cluster cpu-2 --stages 2 --batch 8 --micro-batches 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measured profile"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted step"), std::string::npos) << r.out;
}

TEST_F(PlanCommand, BadInputIsOneClearError) {
  CliResult r = run_baton("plan --model resnet50 --stages 4 --partitioner greedy");
  EXPECT_EQ(r.exit_code, 1);
  // The choices' names are parsed as `baton train` parses them (parallel_choices.h): one error naming the flag.
  EXPECT_NE(r.err.find("--partitioner is 'greedy', expected uniform, block, antichain or hypergraph"),
            std::string::npos)
      << r.err;
  r = run_baton("plan --model resnet50 --stages 4 --schedule zigzag");
  EXPECT_NE(r.err.find("zigzag"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--schedule: "), std::string::npos) << r.err;
  r = run_baton("plan --model resnet50 --stages 4 --grad-sync sometimes");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--grad-sync: unknown gradient synchronisation 'sometimes'"), std::string::npos) << r.err;
  r = run_baton("plan --model resnet50 --stages 4 --groups 4");
  EXPECT_NE(r.err.find("needs 16 devices"), std::string::npos) << r.err;
  r = run_baton("plan --model resnet50 --stages 2 --memory-cap 0.01");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("memory cap"), std::string::npos) << r.err;
  r = run_baton("plan --model resnet50 --stages 2 --batch 100 --micro-batches 8");
  EXPECT_NE(r.err.find("divisible"), std::string::npos) << r.err;
  const fs::path bad = dir_ / "bad.json";
  std::ofstream(bad) << R"({"format": "baton.profile/1", "batch_sizes": [4], "nodes": "many"})";
  r = run_baton("plan --profile " + bad.string() + " --stages 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.json: field 'nodes'"), std::string::npos) << r.err;
}

// PipeDream's objective on PipeDream's own VGG-16 profile: its optimum (the value PipeDream's optimiser
// prints, tests/parallel/plan/test_pipedream.cc), every worker used, and the same profile under baton's objective.
TEST_F(PlanCommand, PipeDreamObjectiveOnPipeDreamsProfile) {
  const std::string profile =
      "pipedream:" + std::string(BATON_SOURCE_DIR) + "/tests/data/pipedream-profiles/vgg16/graph.txt";
  CliResult r = run_baton("plan --profile " + profile +
                          " --objective pipedream --gpus 8 --activation-compression-ratio 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["objective"], "pipedream");
  EXPECT_NEAR(j["pipeline_time_s"].get<double>(), 0.10383317028571429, 1e-12);
  EXPECT_EQ(j["states"], 40);
  int replicas = 0;
  for (const nlohmann::json& stage : j["stages"]) replicas += stage["replicas"].get<int>();
  EXPECT_EQ(replicas, 8);
  r = run_baton("plan --profile " + profile + " --objective pipedream --gpus 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("activation transfers not costed; 40 antichain states"), std::string::npos) << r.out;
  r = run_baton("plan --profile " + profile + " --batch 128 --stages 4 --partitioner antichain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted step"), std::string::npos) << r.out;
  r = run_baton("plan --profile " + profile + " --objective pipedream --gpus 4 --stages 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("belong to baton's objective"), std::string::npos) << r.err;
  r = run_baton("plan --model resnet20 --objective fastest");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--objective: expected baton or pipedream, got 'fastest'"), std::string::npos) << r.err;
}

// --memory-cap and --straight-pipeline under PipeDream's objective are PipeDream's memory limit and straight
// pipeline: on its VGG-16 profile, the optima its optimiser reaches with them (tests/parallel/plan/test_pipedream.cc).
TEST_F(PlanCommand, PipeDreamObjectiveHonoursMemoryLimitAndStraightPipeline) {
  const std::string profile =
      "plan --profile pipedream:" + std::string(BATON_SOURCE_DIR) + "/tests/data/pipedream-profiles/vgg16/graph.txt";
  CliResult r = run_baton(profile + " --objective pipedream --gpus 4 --straight-pipeline --memory-cap 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["pipeline_time_s"].get<double>(), 0.241, 1e-12);
  EXPECT_EQ(j["straight_pipeline"], true);
  EXPECT_EQ(j["memory_limit_gb"], 8.0);
  ASSERT_EQ(j["stages"].size(), 4u);
  for (const nlohmann::json& stage : j["stages"]) EXPECT_EQ(stage["replicas"], 1);
  r = run_baton(profile + " --objective pipedream --gpus 4 --memory-cap 12 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["pipeline_time_s"].get<double>(), 0.18650614000000004, 1e-12);
  EXPECT_EQ(j["straight_pipeline"], false);
  r = run_baton(profile + " --objective pipedream --gpus 4 --straight-pipeline --memory-cap 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 workers in a straight pipeline, memory limit 8 GB, 1 GB/s"), std::string::npos) << r.out;
}

// --replication: free per-stage replication for one plan (antichain), and --search narrowed to one kind with
// every ranked plan's stages (node names and replicas) in --json.
TEST_F(PlanCommand, ReplicationEqualOrFree) {
  CliResult r =
      run_baton("plan --model resnet50 --gpus 4 --batch 64 --partitioner antichain --replication free --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  int devices = 0;
  for (const nlohmann::json& stage : j["stages"]) devices += stage["replicas"].get<int>();
  EXPECT_LE(devices, 4);
  EXPECT_GE(devices, 1);

  r = run_baton("plan --model resnet50 --gpus 4 --batch 64 --search --replication free --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["ranking"].empty());
  for (const nlohmann::json& entry : j["ranking"]) {
    EXPECT_NE(entry["plan"].get<std::string>().find("+replication"), std::string::npos) << entry["plan"];
    if (!entry["feasible"].get<bool>()) continue;
    ASSERT_TRUE(entry["stage_nodes"].is_array()) << entry["plan"];
    size_t nodes = 0;
    for (const nlohmann::json& stage : entry["stage_nodes"]) {
      nodes += stage["nodes"].size();
      EXPECT_GE(stage["replicas"].get<int>(), 1);
    }
    EXPECT_EQ(nodes, j["nodes"].size()) << entry["plan"];
  }

  r = run_baton("plan --model resnet50 --gpus 4 --replication some");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--replication is 'some', expected 'equal' or 'free'"), std::string::npos) << r.err;
  for (const char* partitioner : {"block", "uniform"}) {
    r = run_baton(std::string("plan --model resnet50 --gpus 4 --partitioner ") + partitioner + " --replication free");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--replication free: per-stage replication is the antichain partitioner's"), std::string::npos)
        << r.err;
  }
}

// Predictions from the shipped GPU descriptions say they are uncalibrated; those from this machine's measured
// CPU figures do not.
TEST_F(PlanCommand, DatasheetFiguresAreMarkedUncalibrated) {
  CliResult r = run_baton("plan --model resnet20 --gpus 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("analytic profile on h200 (uncalibrated: datasheet peaks times assumed efficiencies)"),
            std::string::npos)
      << r.out;
  r = run_baton("plan --model resnet20 --gpus 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["profile"]["calibrated"], false);
  r = run_baton("plan --model resnet20 --gpus 2 --cluster cpu-2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["profile"]["calibrated"], true);
  r = run_baton("plan --model resnet20 --gpus 2 --cluster cpu-2");
  EXPECT_EQ(r.out.find("uncalibrated"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace baton::cli
