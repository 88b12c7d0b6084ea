// `baton train --config FILE` with a "parallel" object: the pipeline settings from the file, the
// pipeline flags overriding them, and unknown fields as one-line errors naming the file and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

class TrainParallelConfig : public CliTest {
 protected:
  // A config file training resnet20 for one step on synthetic data, with `parallel` as its "parallel" object.
  std::string config_with(const std::string& parallel) {
    const std::filesystem::path file = dir_ / "run.json";
    std::ofstream(file) << R"({"model": "resnet20", "data": "synthetic:3x32x32:10:64", "workers": 1, "batch_size": 16,
                              "steps": 1, "eval_every": 0, "parallel": )"
                        << parallel << "}";
    return file.string();
  }
};

TEST_F(TrainParallelConfig, ThePipelineComesFromTheFileAndFlagsOverrideIt) {
  const std::string file = config_with(R"({"stages": 2, "micro_batches": 4, "devices": ["cpu:0", "cpu:1"]})");
  const CliResult from_file = run_baton("train --config " + file);
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_NE(from_file.out.find("pipeline: block 1x2 1f1b M=4"), std::string::npos) << from_file.out;
  EXPECT_NE(from_file.out.find("cluster cpu-2"), std::string::npos) << from_file.out;
  EXPECT_NE(from_file.out.find("cpu:1"), std::string::npos) << from_file.out;
  EXPECT_NE(from_file.out.find("step time: predicted "), std::string::npos) << from_file.out;

  const CliResult overridden = run_baton("train --config " + file + " --micro-batches 2 --schedule gpipe");
  ASSERT_EQ(overridden.exit_code, 0) << overridden.err;
  EXPECT_NE(overridden.out.find("pipeline: block 1x2 gpipe M=2"), std::string::npos) << overridden.out;
}

TEST_F(TrainParallelConfig, UnknownFieldsAreOneLineErrorsNamingTheFileAndTheField) {
  const CliResult typo = run_baton("train --config " + config_with(R"({"stages": 2, "micro_batch": 4})"));
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_NE(typo.err.find("run.json (field 'parallel'): unknown field 'micro_batch'"), std::string::npos) << typo.err;
  EXPECT_EQ(std::count(typo.err.begin(), typo.err.end(), '\n'), 1) << typo.err;

  // A "parallel" object without stages is the pipeline flags without --stages.
  const CliResult no_stages = run_baton("train --config " + config_with(R"({"micro_batches": 4})"));
  EXPECT_EQ(no_stages.exit_code, 1);
  EXPECT_NE(no_stages.err.find("need --stages"), std::string::npos) << no_stages.err;
}

}  // namespace
}  // namespace baton::cli
