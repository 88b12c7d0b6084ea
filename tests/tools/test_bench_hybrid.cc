// `baton bench hybrid` runs as a user runs it (ResNet-20, a global batch of 8, layouts 1x2, 2x1 and
// 2x2, 1 timed step) and writes JSON with the documented fields: one run per layout and strategy,
// the partition strategy's single all-reduce per stage, the bucket strategy's one per bucket, the
// simulator's prediction beside each; bad flags are one-line errors. Timings are never compared
// with a bound.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

using BenchHybridCommand = CliTest;

TEST_F(BenchHybridCommand, LayoutsAndStrategiesWriteTheDocumentedJson) {
  CliResult r;
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(run_bench("bench hybrid --batch-size 8 --steps 1 --warmup 0", "hybrid.json", r, j));
  EXPECT_NE(r.out.find("2x2     partition"), std::string::npos) << r.out;
  EXPECT_EQ(j["benchmark"], "hybrid");
  EXPECT_EQ(j["model"], "resnet20");
  EXPECT_EQ(j["batch"], 8);
  EXPECT_EQ(j["micro_batches_per_group"], 2);
  const nlohmann::json& runs = j["runs"];
  ASSERT_EQ(runs.size(), 5u);  // 1x2; 2x1 and 2x2 under bucket and partition
  for (const nlohmann::json& run : runs) {
    SCOPED_TRACE(run.dump());
    expect_positive(run, "step_ms");
    expect_positive(run, "samples_per_s");
    EXPECT_EQ(run["samples_ms"].size(), 1u);
    EXPECT_GE(run["hidden_fraction"].get<double>(), 0);
    EXPECT_LE(run["hidden_fraction"].get<double>(), 1);
    ASSERT_EQ(run["predicted"]["available"], true);
    expect_positive(run["predicted"], "step_ms");
    expect_positive(run["predicted"], "measured_over_predicted");
    const int groups = run["groups"], stages = run["stages"];
    const double messages = run["allreduce_messages_per_step"];
    if (groups == 1) {
      EXPECT_EQ(run["grad_sync"], "none");
      EXPECT_EQ(messages, 0);
    } else if (run["grad_sync"] == "partition") {
      EXPECT_EQ(messages, stages);  // one all-reduce per stage and step
      expect_positive(run, "allreduce_bytes_per_step");
    } else {
      EXPECT_EQ(run["grad_sync"], "bucket");
      EXPECT_GE(messages, stages);  // at least one bucket per stage
    }
  }
}

TEST_F(BenchHybridCommand, BadFlagsAreOneLineErrors) {
  expect_one_line_error("bench hybrid --layouts 2by2", "'2by2' is not GxS with G, S >= 1");
  expect_one_line_error("bench hybrid --layouts 3x1 --batch-size 8", "does not split into 3 groups of 2 micro-batches");
  expect_one_line_error("bench hybrid --schedule zigzag", "zigzag");
}

}  // namespace
}  // namespace baton::cli
