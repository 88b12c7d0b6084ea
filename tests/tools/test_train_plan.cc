// `baton plan --json FILE` then `baton train --plan FILE`: the plan runs as written (its split,
// replicas and devices, said in the stage table) with the losses of the same layout given by flags;
// an edited plan (a moved cut, other devices) is checked and runs; flags, batches or edits that do
// not fit it are one-line errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

class TrainPlan : public CliTest {
 protected:
  // `baton plan` of kTrain's model and batch: 2 groups of 2 stages on cpu-4, uniform split.
  nlohmann::json make_plan() {
    const CliResult r = run_baton(
        "plan --model resnet20 --input 3x8x8 --classes 4 --cluster cpu-4 --batch 8 --stages 2 --groups 2 "
        "--micro-batches 2 --partitioner uniform --json " +
        plan_.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("wrote the plan to " + plan_.string()), std::string::npos) << r.out;
    return nlohmann::json::parse(read_file_text(plan_));
  }

  void write_plan(const nlohmann::json& j) { std::ofstream(plan_) << j.dump(2); }

  const std::string kRun = "--data synthetic:3x8x8:4:64 --steps 2 --workers 1 --eval-every 0 --log-every 1 ";
  const std::string kTrain = "train --model resnet20 --batch-size 8 " + kRun;
  const std::filesystem::path plan_ = dir_ / "plan.json";
};

std::string stage_range(const nlohmann::json& stage) {
  return stage["nodes"].front().get<std::string>() + " .. " + stage["nodes"].back().get<std::string>();
}

TEST_F(TrainPlan, RunsThePlanAsWrittenWithTheLossesOfTheSameFlags) {
  const nlohmann::json j = make_plan();
  EXPECT_EQ(j["format"], "baton.plan-file/1");
  EXPECT_EQ(j["devices"], nlohmann::json({"cpu:0", "cpu:1", "cpu:2", "cpu:3"}));
  EXPECT_EQ(j["grad_sync"], "bucket");
  EXPECT_EQ(j["model_fingerprint"].get<std::string>().size(), 16u);
  ASSERT_EQ(j["stages"].size(), 2u);

  const std::filesystem::path trace = dir_ / "trace.json";
  const CliResult by_plan = run_baton(kTrain + "--plan " + plan_.string() + " --metrics " +
                                      (dir_ / "plan.jsonl").string() + " --trace " + trace.string());
  ASSERT_EQ(by_plan.exit_code, 0) << by_plan.err;
  EXPECT_NE(by_plan.out.find("pipeline: plan from " + plan_.string() + " (uniform 2x2 1f1b M=2)"), std::string::npos)
      << by_plan.out;
  EXPECT_NE(by_plan.out.find("no profiling, no re-planning"), std::string::npos) << by_plan.out;
  EXPECT_EQ(by_plan.out.find("profiling resnet20"), std::string::npos) << by_plan.out;
  EXPECT_NE(by_plan.out.find("cpu:0,cpu:2"), std::string::npos) << by_plan.out;  // stage 0's replicas
  const CliResult by_flags = run_baton(kTrain + "--stages 2 --groups 2 --micro-batches 2 --partitioner uniform " +
                                       "--metrics " + (dir_ / "flags.jsonl").string());
  ASSERT_EQ(by_flags.exit_code, 0) << by_flags.err;
  for (const nlohmann::json& stage : j["stages"]) {
    EXPECT_NE(by_plan.out.find(stage_range(stage)), std::string::npos) << by_plan.out;
    EXPECT_NE(by_flags.out.find(stage_range(stage)), std::string::npos) << by_flags.out;
  }
  const std::vector<double> planned = logged_losses(dir_ / "plan.jsonl");
  EXPECT_EQ(planned.size(), 2u);
  EXPECT_EQ(planned, logged_losses(dir_ / "flags.jsonl"));
  EXPECT_NE(by_plan.out.find("step time: predicted"), std::string::npos) << by_plan.out;
  const std::string timeline = read_file_text(trace);
  EXPECT_NE(timeline.find("\"predicted\""), std::string::npos);
  EXPECT_NE(timeline.find("measured group 1"), std::string::npos);

  // Edited: stage 0's last node moved into stage 1, the groups on other devices.
  nlohmann::json edited = j;
  nlohmann::json& first = edited["stages"][0]["nodes"];
  nlohmann::json& second = edited["stages"][1]["nodes"];
  second.insert(second.begin(), first.back());
  first.erase(first.size() - 1);
  edited["devices"] = {"cpu:3", "cpu:2", "cpu:1", "cpu:0"};
  write_plan(edited);
  const CliResult moved =
      run_baton(kTrain + "--plan " + plan_.string() + " --metrics " + (dir_ / "edited.jsonl").string());
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_NE(moved.out.find(stage_range(edited["stages"][1])), std::string::npos) << moved.out;
  EXPECT_NE(moved.out.find("cpu:3,cpu:1"), std::string::npos) << moved.out;  // stage 0's replicas
  EXPECT_EQ(logged_losses(dir_ / "edited.jsonl"), planned);                  // the same arithmetic, split elsewhere
}

TEST_F(TrainPlan, WhatDoesNotFitThePlanIsOneLineError) {
  nlohmann::json j = make_plan();
  const std::string run = kTrain + "--plan " + plan_.string();
  expect_one_line_error(run + " --stages 3", "--stages 3 contradicts the plan in " + plan_.string() + " (2)");
  expect_one_line_error(run + " --stages 2 --groups 4", "--groups 4 contradicts the plan in");
  expect_one_line_error(run + " --grad-sync partition", "--grad-sync partition contradicts the plan in");
  expect_one_line_error(run + " --device cuda", "--device cuda contradicts the plan in " + plan_.string() +
                                                    " (its devices are cpu:0,cpu:1,cpu:2,cpu:3)");
  expect_one_line_error(run + " --data-parallel 2", "--data-parallel 2 with the plan in");
  expect_one_line_error(run + " --micro-batches 4", "--micro-batches 4 contradicts the plan in");
  expect_one_line_error("train --model resnet20 --batch-size 16 " + kRun + "--plan " + plan_.string(),
                        "plan.json: field 'batch' is 8, expected 16");
  expect_one_line_error("train --model resnet32 --batch-size 8 " + kRun + "--plan " + plan_.string(),
                        "plan.json: field 'model_fingerprint'");
  expect_one_line_error(run, "started 3 processes for the plan in " + plan_.string() + ", which runs 4 stage replicas",
                        "OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=0");
  j["stages"][1]["nodes"].push_back(j["stages"][0]["nodes"][0]);
  write_plan(j);
  expect_one_line_error(run, "plan.json: field 'stages[1].nodes': expected each node in one stage");
  j["stages"][1]["nodes"].erase(j["stages"][1]["nodes"].size() - 1);
  j["devices"][1] = "cuda:0";
  write_plan(j);
  expect_one_line_error(run, "plan.json: field 'devices[1]': expected every device a CPU device or every one a GPU");
}

}  // namespace
}  // namespace baton::cli
