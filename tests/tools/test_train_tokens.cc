// `baton train --model token-mlp --data tokens:...`: a batch of token ids and per-position targets
// trained single-device, pipelined (the targets enter at the loss's stage) and data parallel with
// the same losses, learnt (per-position top-1 on the test split), and one-line errors for a model
// and data of different kinds.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

class TrainTokens : public CliTest {
 protected:
  // The losses of `baton train` of token-mlp with `flags`.
  std::vector<double> run_losses(const std::string& flags, const std::string& name) {
    const std::filesystem::path metrics = dir_ / (name + ".jsonl");
    const CliResult r = run_baton(kTrain + flags + " --metrics " + metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("done after 6 steps"), std::string::npos) << r.out;
    return logged_losses(metrics);
  }

  const std::string kTrain =
      "train --model token-mlp --data tokens:16:8:256 --batch-size 8 --steps 6 --workers 1 --log-every 1 "
      "--eval-every 0 --lr 0.5 --seed 3 ";
};

TEST_F(TrainTokens, SingleDevicePipelineAndDataParallelTrainTheSameLosses) {
  const std::vector<double> single = run_losses("--device cpu", "single");
  ASSERT_EQ(single.size(), 6u);
  EXPECT_LT(single.back(), single.front()) << "the loss falls";
  for (const std::string& flags : {std::string("--stages 2 --micro-batches 2"), std::string("--data-parallel 2")}) {
    SCOPED_TRACE(flags);
    const std::vector<double> other = run_losses(flags, flags.substr(2, 6));
    ASSERT_EQ(other.size(), single.size());
    for (size_t i = 0; i < single.size(); ++i) {
      EXPECT_NEAR(other[i], single[i], 1e-5 * std::abs(single[i])) << "step " << i + 1;
    }
  }
}

TEST_F(TrainTokens, TheNextTokenIsLearntAndScoredPerPositionByEveryEngine) {
  for (const std::string& flags :
       {std::string("--device cpu"), std::string("--stages 2 --micro-batches 2"), std::string("--data-parallel 2")}) {
    SCOPED_TRACE(flags);
    const CliResult r = run_baton(
        "train --model token-mlp --data tokens:16:8:512 --batch-size 16 --steps 32 --workers 1 --lr 0.5 --seed 1 " +
        flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const size_t at = r.out.find("; test loss ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const size_t top1 = r.out.find("top-1 ", at);
    ASSERT_NE(top1, std::string::npos) << r.out;
    EXPECT_GT(std::stod(r.out.substr(top1 + 6)), 90.0) << r.out;
  }
}

TEST_F(TrainTokens, AModelAndDataOfDifferentKindsAreOneLineErrors) {
  expect_one_line_error("train --model resnet20 --data tokens:16:8:64 --steps 1",
                        "model 'resnet20' takes images; data 'tokens:16:8:64' holds tokens [8] i64, targets [8] i64");
  expect_one_line_error("train --model token-mlp --data synthetic:3x8x8:4:64 --steps 1",
                        "model 'token-mlp' takes token sequences; data 'synthetic:3x8x8:4:64' holds images");
}

}  // namespace
}  // namespace baton::cli
