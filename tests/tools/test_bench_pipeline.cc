// `baton bench pipeline` runs as a user runs it (CPU, 2 stages, 2 micro-batches, --quick) and writes
// JSON with the documented fields, every figure positive. Timings are never compared with a bound.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

using BenchPipelineCommand = CliTest;

TEST_F(BenchPipelineCommand, QuickCpuRunWritesTheDocumentedJson) {
  CliResult r;
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(
      run_bench("bench pipeline --device cpu --stages 2 --micro-batches 2 --quick", "pipeline.json", r, j));
  EXPECT_NE(r.out.find("host overhead"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("samples/s"), std::string::npos) << r.out;

  EXPECT_EQ(j["benchmark"], "pipeline");
  EXPECT_EQ(j["device"], "cpu:0");
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["micro_batches"], 2);
  EXPECT_EQ(j["stage_devices"], nlohmann::json::array({"cpu:0", "cpu:1"}));
  EXPECT_EQ(j["quick"], true);
  expect_positive(j["host"], "hardware_threads");

  const nlohmann::json& overhead = j["overhead"];
  expect_positive(overhead, "identities_per_stage");
  ASSERT_EQ(overhead["results"].size(), 2u);  // GPipe and 1F1B
  EXPECT_EQ(overhead["results"][0]["schedule"], "gpipe");
  EXPECT_EQ(overhead["results"][1]["schedule"], "1f1b");
  for (const nlohmann::json& row : overhead["results"]) {
    for (const char* field : {"step_us", "step_min_us", "baseline_step_us", "per_micro_batch_per_stage_us",
                              "cpu_step_us", "cpu_baseline_step_us"}) {
      expect_positive(row, field);
    }
    // Differences of two medians: numbers, but their sign is not guaranteed on a busy machine.
    EXPECT_TRUE(row["marginal_us_per_micro_batch_per_stage"].is_number());
    EXPECT_TRUE(row["cpu_marginal_us_per_micro_batch_per_stage"].is_number());
  }

  const nlohmann::json& t = j["throughput"];
  EXPECT_EQ(t["model"], "resnet20");
  expect_positive(t, "batch");
  expect_positive(t, "micro_batch");
  expect_positive(t, "hardware_threads");
  EXPECT_EQ(t["cluster"], "cpu-2");
  for (const char* config : {"plain_executor", "one_stage", "pipeline"}) {
    SCOPED_TRACE(config);
    expect_positive(t[config], "step_ms");
    expect_positive(t[config], "samples_per_s");
    EXPECT_EQ(t[config]["samples_ms"].size(), t["repeats"].get<size_t>());
  }
  EXPECT_EQ(t["pipeline"]["stages"], 2);
  EXPECT_EQ(t["pipeline"]["micro_batches"], 2);
  ASSERT_EQ(t["pipeline"]["plan"].size(), 2u);
  expect_positive(t, "speedup");
  const nlohmann::json& p = t["predicted"];
  for (const char* field :
       {"one_stage_step_ms", "pipeline_step_ms", "in_series_step_ms", "core_bound_step_ms", "speedup"}) {
    expect_positive(p, field);
  }
  for (const char* field : {"one_stage_error_percent", "pipeline_error_percent", "in_series_error_percent",
                            "core_bound_error_percent", "headline_error_percent"}) {
    EXPECT_TRUE(p[field].is_number()) << field;
  }
  EXPECT_EQ(p["headline"], "core_bound");  // CPU virtual devices share the machine's cores
}

TEST_F(BenchPipelineCommand, IndivisibleBatchIsAClearError) {
  const CliResult r = run_baton("bench pipeline --device cpu --stages 2 --micro-batches 3 --batch 8 --quick");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--batch 8 must be divisible by --micro-batches 3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace baton::cli
