// `baton train --data-parallel N` in one process: the replicas' setup line, a config file's
// "data_parallel", and one-line errors for settings that cannot run (an uneven global batch, the
// hybrid with --stages, --unused-parameters alone, a launcher's process count without a matching
// --data-parallel, a malformed launcher variable).
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
  expect_one_line_error(kRun + "--data-parallel 2 --model-averaging bmuf",
                        "--model-averaging bmuf is not available yet");
  expect_one_line_error(kRun + "--data-parallel 2 --model-averaging periodic --average-every 0",
                        "--average-every must be at least 1");
  expect_one_line_error(kRun + "--model-averaging periodic",
                        "--model-averaging and --average-every need --data-parallel N");
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
