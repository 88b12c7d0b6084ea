// `baton bench dp` runs as a user runs it (ResNet-20, a global batch of 4, 2 replicas, 2 timed steps)
// and writes JSON with the documented fields, every figure positive, the simulator's prediction
// beside the measured step; bad flags are one-line errors. Timings are never compared with a bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

using BenchDpCommand = CliTest;

TEST_F(BenchDpCommand, TwoReplicasWriteTheDocumentedJson) {
  CliResult r;
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(run_bench("bench dp --batch-size 4 --steps 2 --warmup 1 --replicas 2", "dp.json", r, j));
  EXPECT_NE(r.out.find("scaling efficiency:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of it during backward"), std::string::npos) << r.out;

  EXPECT_EQ(j["benchmark"], "dp");
  EXPECT_EQ(j["model"], "resnet20");
  EXPECT_EQ(j["image_size"], 32);
  EXPECT_EQ(j["batch"], 4);
  EXPECT_EQ(j["replicas"], 2);
  EXPECT_EQ(j["mode"], "threads");
  expect_positive(j["host"], "hardware_threads");
  for (const char* run : {"one_replica", "replicated"}) {
    SCOPED_TRACE(run);
    expect_positive(j[run], "step_ms");
    expect_positive(j[run], "step_min_ms");
    expect_positive(j[run], "samples_per_s");
    EXPECT_EQ(j[run]["samples_ms"].size(), 2u);
  }
  EXPECT_EQ(j["one_replica"]["replicas"], 1);
  EXPECT_EQ(j["replicated"]["replicas"], 2);
  expect_positive(j, "scaling_efficiency");

  const nlohmann::json& c = j["communication"];
  ASSERT_GE(c["buckets"].get<int>(), 1);
  ASSERT_EQ(c["bucket_bytes"].size(), c["buckets"].get<size_t>());
  for (const nlohmann::json& b : c["bucket_bytes"]) EXPECT_GT(b.get<double>(), 0);
  expect_positive(c, "allreduce_ms");
  ASSERT_TRUE(c["hidden_fraction"].is_number());
  EXPECT_GE(c["hidden_fraction"].get<double>(), 0);
  EXPECT_LE(c["hidden_fraction"].get<double>(), 1);
  EXPECT_EQ(c["hidden_fraction_per_step"].size(), 2u);

  const nlohmann::json& p = j["predicted"];
  ASSERT_EQ(p["available"], true) << p.dump();
  EXPECT_EQ(p["cluster"], "cpu-2");
  for (const char* field : {"one_replica_step_ms", "replicated_step_ms", "in_series_step_ms", "core_bound_step_ms",
                            "measured_over_predicted", "one_replica_measured_over_predicted"}) {
    expect_positive(p, field);
  }
  EXPECT_TRUE(p["error_percent"].is_number());
}

TEST_F(BenchDpCommand, BadFlagsAreOneLineErrors) {
  expect_one_line_error("bench dp --batch-size 5 --replicas 2",
                        "--batch-size 5 is the global batch and must split evenly over the 2");
  expect_one_line_error("bench dp --steps 0", "--steps must be >= 1 and --warmup >= 0");
  expect_one_line_error("bench dp --replicas 65", "--replicas 65: expected 1 to 64");
  expect_one_line_error("bench dp --replicas 0", "--replicas 0: expected 1 to 64");
  expect_one_line_error("bench dp --replicas 3 --batch-size 6", "--replicas 3 with 2 processes from Open MPI",
                        "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
  expect_one_line_error("bench dp --model nosuchmodel --batch-size 4", "nosuchmodel");
}

}  // namespace
}  // namespace baton::cli
