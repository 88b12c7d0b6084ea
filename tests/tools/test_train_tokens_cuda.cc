// `baton train --model token-mlp --device cuda`: one-hot, Linear over [n, T, features] and the
// per-position cross-entropy on a CUDA device follow the CPU run step by step within float32 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

class TrainTokensCuda : public CliTest {
 protected:
  // The losses of `baton train` of token-mlp on `device`: six steps', then the test split's (per-position
  // evaluation on the device).
  std::vector<double> run_losses(const std::string& device) {
    const std::filesystem::path metrics = dir_ / (device + ".jsonl");
    const CliResult r = run_baton(
        "train --model token-mlp --data tokens:16:8:256 --batch-size 8 --steps 6 --workers 1 --log-every 1 "
        "--eval-every 6 --lr 0.5 --seed 3 --device " +
        device + " --metrics " + metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("done after 6 steps"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("; test loss "), std::string::npos) << r.out;
    return logged_losses(metrics);
  }
};

TEST_F(TrainTokensCuda, CudaRunFollowsTheCpuRun) {
  BATON_REQUIRE_GPU();
  const std::vector<double> cpu = run_losses("cpu"), gpu = run_losses("cuda");
  ASSERT_EQ(cpu.size(), 7u);
  EXPECT_LT(gpu[5], gpu[0]) << "the loss falls";
  EXPECT_TRUE(testing::all_close(gpu, cpu, 1e-4, 1e-5));
}

}  // namespace
}  // namespace baton::cli
