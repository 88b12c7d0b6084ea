// `baton train --groups G --stages S` in one process (the hybrid): the stage table with every
// group's devices, the hybrid's line, the all-reduce lanes in the trace, a config file's "groups"
// and "grad_sync", and one-line errors for settings that cannot run.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

class TrainHybrid : public CliTest {};

const std::string kHybridRun =
    "train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 2 --workers 1 --eval-every 0 ";

TEST_F(TrainHybrid, TrainsGroupsOfPipelinesInThisProcess) {
  const std::filesystem::path trace = dir_ / "trace.json";
  const CliResult r = run_baton(kHybridRun + "--groups 2 --stages 2 --grad-sync partition --trace " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu:0,cpu:2"), std::string::npos) << r.out;  // stage 0's replicas
  EXPECT_NE(r.out.find("hybrid: 2 groups of this pipeline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(partition)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("done after 2 steps"), std::string::npos) << r.out;
  const std::string timeline = read_file_text(trace);
  EXPECT_NE(timeline.find("stage 1 all-reduce"), std::string::npos);
  EXPECT_NE(timeline.find("all-reduce s0"), std::string::npos);
  EXPECT_NE(timeline.find("measured group 1"), std::string::npos);  // every group's lanes
  EXPECT_NE(r.out.find("measured steps of every group"), std::string::npos) << r.out;

  const std::filesystem::path file = dir_ / "run.json";
  std::ofstream(file) << R"({"parallel": {"groups": 4, "stages": 1, "grad_sync": "bucket"}})";
  const CliResult from_file = run_baton(kHybridRun + "--config " + file.string());
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_NE(from_file.out.find("hybrid: 4 groups of this pipeline"), std::string::npos) << from_file.out;
  EXPECT_NE(from_file.out.find("(bucket)"), std::string::npos) << from_file.out;
}

// Model averaging inside the hybrid: --groups 2 --stages 2 trains with it; one group refuses it.
TEST_F(TrainHybrid, AveragesEachStagesReplicasAcrossTheGroups) {
  const CliResult r = run_baton(
      kHybridRun + "--groups 2 --stages 2 --model-averaging bmuf --average-every 2 --averaging-exchange tree");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model averaging (bmuf): each stage's replicas meet across the groups every 2 steps (tree "
                       "exchange)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("done after 2 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model averaging: the replicas met 1 times"), std::string::npos) << r.out;
  const CliResult one = run_baton(kHybridRun + "--stages 2 --model-averaging periodic");
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.err.find("need --data-parallel N or --groups G"), std::string::npos) << one.err;
}

// --replication free: the antichain partitioner picks the stages and each stage's replicas over
// groups x stages devices; whatever it picks (equal or not) trains, and the stage table lists every
// replica's device.
TEST_F(TrainHybrid, FreeReplicationTrainsThePlanTheAntichainPartitionerChooses) {
  const CliResult r = run_baton(
      "train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 2 --workers 1 --eval-every 2 "
      "--groups 1 --stages 3 --replication free --partitioner antichain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pipeline: antichain+replication "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("done after 2 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top-1"), std::string::npos) << r.out;  // evaluation through the first replicas
  expect_one_line_error(kHybridRun + "--stages 2 --replication free", "add --partitioner antichain");
  expect_one_line_error(kHybridRun + "--stages 2 --replication some --partitioner antichain",
                        "--replication is 'some', expected 'equal' or 'free'");
  expect_one_line_error(kHybridRun + "--stages 2 --replication free --partitioner antichain --schedule interleaved",
                        "--replication free runs one stage per position");
}

TEST_F(TrainHybrid, SettingsThatCannotRunAreOneLineErrors) {
  expect_one_line_error(kHybridRun + "--groups 3 --stages 1", "must split evenly over the 3 groups of --groups");
  expect_one_line_error(kHybridRun + "--groups 2 --stages 2 --grad-sync sometimes",
                        "unknown gradient synchronisation 'sometimes' (expected bucket or partition)");
  expect_one_line_error(kHybridRun + "--stages 2 --grad-sync partition", "--grad-sync needs --groups G");
  expect_one_line_error(kHybridRun + "--groups 2", "give their stages with --stages S");
  expect_one_line_error(kHybridRun + "--groups 2 --stages 2 --micro-batches 3", "does not divide each group's share");
  expect_one_line_error(kHybridRun + "--groups 0 --stages 2", "--groups must be at least 1");
  // Under a launcher (its environment faked): one process per group and stage, each on its cpu:0.
  expect_one_line_error(kHybridRun + "--groups 2 --stages 1",
                        "3 processes for --groups 2 --stages 1: the hybrid across processes runs one process per group "
                        "and stage (2 x 1 = 2)",
                        "OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=0");
  expect_one_line_error(kHybridRun + "--groups 2 --stages 1 --devices cpu:0,cpu:1",
                        "--devices with the hybrid across processes: each process runs its stage on cpu:0",
                        "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
}

}  // namespace
}  // namespace baton::cli
