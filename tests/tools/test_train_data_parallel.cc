// `baton train --data-parallel N` in one process: the replicas' setup line, a config file's
// "data_parallel", and one-line errors for settings that cannot run (an uneven global batch, the
// hybrid with --stages, --unused-parameters alone, a launcher's process count without a matching
// --data-parallel, a malformed launcher variable); the model-averaging variants, their knobs and the
// one-line errors for bad ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

class TrainDataParallel : public CliTest {};

const std::string kRun =
    "train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 2 --workers 1 --eval-every 0 ";

TEST_F(TrainDataParallel, TrainsReplicasInThisProcess) {
  const std::filesystem::path trace = dir_ / "trace.json";
  const CliResult r = run_baton(kRun + "--data-parallel 2 --trace " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of the last step's all-reduce time ran during backward"), std::string::npos) << r.out;
  const std::string timeline = read_file_text(trace);
  EXPECT_NE(timeline.find("replica 1 communication"), std::string::npos);
  EXPECT_NE(timeline.find("all-reduce bucket 0"), std::string::npos);
  EXPECT_NE(r.out.find("data parallel: 2 replicas in this process on cpu:0,cpu:1, 4 samples each per step"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("done after 2 steps"), std::string::npos) << r.out;

  const std::filesystem::path file = dir_ / "run.json";
  std::ofstream(file) << R"({"parallel": {"data_parallel": 4, "unused_parameters": "ready"}})";
  const CliResult from_file = run_baton(kRun + "--config " + file.string());
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_NE(from_file.out.find("data parallel: 4 replicas in this process"), std::string::npos) << from_file.out;
}

TEST_F(TrainDataParallel, ModelAveragingTrainsLocallyAndAveragesEveryHSteps) {
  const CliResult r = run_baton(kRun + "--data-parallel 2 --model-averaging periodic --average-every 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model averaging (periodic): each replica steps on its own gradients, parameters averaged "
                       "every 2 steps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("done after 2 steps"), std::string::npos) << r.out;
  expect_one_line_error(kRun + "--data-parallel 2 --model-averaging periodic --average-every 0",
                        "--average-every must be at least 1");
  expect_one_line_error(kRun + "--model-averaging periodic",
                        "--model-averaging, --average-every and the averaging knobs need --data-parallel N");
}

TEST_F(TrainDataParallel, BmufEasgdAndPostLocalRunWithTheirKnobs) {
  const std::filesystem::path cluster = dir_ / "two_nodes.json";
  std::ofstream(cluster) << R"({"name": "two-by-two", "device": "cpu", "nodes": 2, "gpus_per_node": 2,
    "intra": {"kind": "memory", "bandwidth_gbs": 10, "latency_us": 1},
    "inter": {"kind": "network", "bandwidth_gbs": 1, "latency_us": 10}})";
  const CliResult bmuf =
      run_baton(kRun +
                "--data-parallel 4 --model-averaging bmuf --average-every 2 --block-momentum 0.5 --block-lr 0.9 "
                "--averaging-exchange tree --averaging-cluster " +
                cluster.string());
  ASSERT_EQ(bmuf.exit_code, 0) << bmuf.err;
  EXPECT_NE(bmuf.out.find("model averaging (bmuf): each replica steps on its own gradients, block momentum update "
                          "every 2 steps (tree exchange)"),
            std::string::npos)
      << bmuf.out;
  EXPECT_NE(bmuf.out.find("model averaging: the replicas met 1 times"), std::string::npos) << bmuf.out;
  const CliResult easgd = run_baton(kRun + "--data-parallel 2 --model-averaging easgd --elastic-beta 0.5");
  ASSERT_EQ(easgd.exit_code, 0) << easgd.err;
  EXPECT_NE(easgd.out.find("elastic move towards the centre every 1 steps (ring exchange)"), std::string::npos)
      << easgd.out;
  const CliResult post = run_baton(kRun + "--data-parallel 2 --model-averaging post-local --local-after 1");
  ASSERT_EQ(post.exit_code, 0) << post.err;
  EXPECT_NE(post.out.find("gradients all-reduced for the first 1 steps, then each replica"), std::string::npos)
      << post.out;
}

TEST_F(TrainDataParallel, BadAveragingKnobsAreOneLineErrors) {
  const std::string dp = kRun + "--data-parallel 2 ";
  expect_one_line_error(dp + "--model-averaging sometimes",
                        "unknown --model-averaging 'sometimes' (expected none, periodic, bmuf, easgd or post-local)");
  expect_one_line_error(dp + "--model-averaging bmuf --block-momentum 1", "--block-momentum must be in [0, 1) (got 1");
  expect_one_line_error(dp + "--model-averaging bmuf --block-lr -1", "--block-lr must be greater than 0 (got -1)");
  expect_one_line_error(dp + "--model-averaging easgd --elastic-beta 2", "--elastic-beta must be in (0, 1] (got 2)");
  expect_one_line_error(dp + "--model-averaging periodic --elastic-beta 0.5",
                        "--elastic-beta is for --model-averaging easgd (got periodic)");
  expect_one_line_error(dp + "--model-averaging bmuf --local-after 3",
                        "--local-after is for --model-averaging post-local (got bmuf)");
  expect_one_line_error(dp + "--model-averaging post-local --local-after -2", "--local-after must be at least 0");
  expect_one_line_error(dp + "--model-averaging periodic --averaging-exchange star",
                        "unknown --averaging-exchange 'star' (expected ring or tree)");
  expect_one_line_error(dp + "--model-averaging periodic --averaging-cluster cpu-2",
                        "--averaging-cluster shapes the tree exchange: give it with --averaging-exchange tree");
  expect_one_line_error(dp + "--model-averaging periodic --averaging-exchange tree --averaging-cluster cpu-1",
                        "--averaging-cluster cpu-1 has 1 devices for 2 replicas");
  expect_one_line_error(kRun + "--block-lr 0.5", "the averaging knobs need --data-parallel N");
}

TEST_F(TrainDataParallel, SettingsThatCannotRunAreOneLineErrors) {
  expect_one_line_error(kRun + "--data-parallel 3",
                        "--batch-size 8 is the global batch and must split evenly over the 3");
  expect_one_line_error(kRun + "--data-parallel 2 --stages 2", "hybrid of pipeline and data parallelism");
  expect_one_line_error(kRun + "--unused-parameters ready", "--unused-parameters needs --data-parallel N");
  expect_one_line_error(kRun + "--data-parallel 2 --unused-parameters sometimes", "expected 'error' or 'ready'");
  expect_one_line_error(kRun,
                        "Open MPI started 2 processes: train them as one data-parallel run with --data-parallel 2",
                        "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
  expect_one_line_error(kRun + "--data-parallel 2", "environment variable OMPI_COMM_WORLD_SIZE is 'two'",
                        "OMPI_COMM_WORLD_SIZE=two");
}

}  // namespace
}  // namespace baton::cli
