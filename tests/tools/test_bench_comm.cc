// `baton bench comm` runs as a user runs it (inproc, 3 threads, up to 1 MiB, few samples) and writes
// JSON with the documented fields, every figure positive and the bandwidths as nccl-tests defines
// them; bad flags are one-line errors. Timings are never compared with a bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/core/build_config.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

using BenchCommCommand = CliTest;

TEST_F(BenchCommCommand, InprocRunWritesTheDocumentedJson) {
  CliResult r;
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(
      run_bench("bench comm --backend inproc --ranks 3 --max-bytes 1M --warmup 1 --repeats 3", "comm.json", r, j));
  EXPECT_NE(r.out.find("busbw GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("from 1 MiB, baton's time is at most"), std::string::npos) << r.out;

  EXPECT_EQ(j["benchmark"], "comm");
  EXPECT_EQ(j["operation"], "all_reduce");
  EXPECT_EQ(j["op"], "sum");
  EXPECT_EQ(j["dtype"], "f32");
  EXPECT_EQ(j["backend"], "inproc");
  EXPECT_EQ(j["ranks"], 3);
  EXPECT_EQ(j["baseline"], "plain threads summing in shared memory");
  EXPECT_EQ(j["timing"]["warmup"], 1);
  EXPECT_EQ(j["timing"]["repeats"], 3);
  expect_positive(j["host"], "hardware_threads");
  expect_positive(j, "max_time_percent_of_baseline_from_1mib");

  const nlohmann::json& rows = j["results"];
  ASSERT_EQ(rows.size(), 9u);  // 4 KiB .. 1 MiB, doubling
  int64_t bytes = 4096;
  for (const nlohmann::json& row : rows) {
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["bytes"], bytes);
    EXPECT_EQ(row["elements"], bytes / 4);
    bytes *= 2;
    for (const char* field : {"calls_per_sample", "time_us", "algbw_gbs", "busbw_gbs", "baseline_time_us",
                              "baseline_algbw_gbs", "baseline_busbw_gbs", "time_percent_of_baseline"}) {
      expect_positive(row, field);
    }
    // nccl-tests: algbw = bytes / time, busbw = algbw x 2(n - 1)/n.
    const double seconds = row["time_us"].get<double>() * 1e-6;
    EXPECT_NEAR(row["algbw_gbs"].get<double>(), row["bytes"].get<double>() / seconds / 1e9,
                1e-9 * row["algbw_gbs"].get<double>());
    EXPECT_NEAR(row["busbw_gbs"].get<double>(), row["algbw_gbs"].get<double>() * 4.0 / 3.0,
                1e-9 * row["busbw_gbs"].get<double>());
    EXPECT_NEAR(row["time_percent_of_baseline"].get<double>(),
                100 * row["time_us"].get<double>() / row["baseline_time_us"].get<double>(), 1e-6);
  }
}

TEST_F(BenchCommCommand, BadFlagsAreOneLineErrors) {
  expect_one_line_error("bench comm --backend mpi",
                        "--backend mpi needs the processes of an MPI job: run it under mpirun or srun");
  expect_one_line_error("bench comm --backend tcp", "--backend 'tcp': expected inproc, mpi or nccl");
  expect_one_line_error("bench comm --ranks 0 --backend inproc --max-bytes 4K", "--ranks 0: expected 1 to 64");
  expect_one_line_error("bench comm --ranks 65", "--ranks 65: expected 1 to 64");
  expect_one_line_error("bench comm --max-bytes 6", "--max-bytes 6 must be a whole number of f32 elements");
  expect_one_line_error("bench comm --max-bytes 12Q", "--max-bytes '12Q' is not a size");
  expect_one_line_error("bench comm --min-bytes 1M --max-bytes 4K", "--min-bytes 1M is larger than --max-bytes 4K");
  expect_one_line_error("bench comm --repeats 0", "--warmup must be >= 0 and --repeats >= 1");
  expect_one_line_error("bench comm --backend inproc",
                        "--backend inproc runs its ranks as threads of one process, but Open MPI started 2",
                        "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
  expect_one_line_error("bench comm --ranks 3", "--ranks 3 with 2 processes from Open MPI",
                        "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
  expect_one_line_error("bench comm --backend nccl",
                        "--backend nccl runs its ranks as the GPUs of one process, but Open MPI started 2",
                        "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0");
}

// The nccl backend's refusals that need no GPU (bench_comm_nccl, a gpu test, runs it on 2 GPUs).
TEST_F(BenchCommCommand, NcclBackendRefusalsAreOneLineErrors) {
  expect_one_line_error("bench comm --backend nccl --ranks 1",
                        "--ranks 1 with --backend nccl: at least 2 ranks (one per GPU) are needed");
  if constexpr (BATON_HAVE_CUDA == 0) {
    expect_one_line_error("bench comm --backend nccl",
                          "--backend nccl needs a CUDA build, and baton was built without CUDA");
  }
}

}  // namespace
}  // namespace baton::cli
