// Messages a user meets first, where the catalogue's table cannot set the case up: a value of 100 KB
// echoed in a message, a profile whose times are out of range, the summary of an interrupted run.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

// A two-node profile whose first node's forward time is `fwd_ms`.
std::string two_node_profile(const std::string& fwd_ms) {
  return R"({"format": "baton.profile/1", "model": "tiny", "device": "cpu", "batch_sizes": [8],
    "nodes": [{"name": "a", "inputs": [0], "outputs": [1], "fwd_ms": [)" +
         fwd_ms + R"(], "bwd_ms": [1]},
              {"name": "b", "inputs": [1], "outputs": [2], "fwd_ms": [1], "bwd_ms": [1]}],
    "values": [{"name": "x", "producer": -1, "consumers": [0], "bytes_per_sample": 4},
               {"name": "h", "producer": 0, "consumers": [1], "bytes_per_sample": 4},
               {"name": "y", "producer": 1, "consumers": [], "bytes_per_sample": 4, "graph_output": true}]})";
}

class Messages : public CliTest {};

// A 100 KB value is shortened in the message that names it ("xxxx… (100000 bytes)"), which stays short.
TEST_F(Messages, AHugeValueIsShortenedWhereItIsEchoed) {
  const CliResult r = run_baton("train --model " + std::string(100000, 'x'));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown model '" + std::string(79, 'x') + "… (100003 bytes)'; the models are"),
            std::string::npos)
      << r.err.substr(0, 400);
  EXPECT_LT(r.err.size(), 1000u) << r.err.substr(0, 400);
}

// A time of 1e308 ms is named as out of range, not found later as "no pipeline replica can proceed".
TEST_F(Messages, AProfileTimeOutOfRangeIsNamed) {
  std::ofstream(dir_ / "ok.json") << two_node_profile("2");
  std::ofstream(dir_ / "huge.json") << two_node_profile("1e308");
  const CliResult ok = run_baton("plan --stages 2 --batch 8 --profile " + (dir_ / "ok.json").string());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  expect_one_line_error("plan --stages 2 --batch 8 --profile " + (dir_ / "huge.json").string(),
                        "node 0 ('a'): fwd_ms[0] = 1e+308 ms is out of range (at most 8.64e+07 ms, a day");
}

// A run stopped before its first metrics line reports the loss of the steps it did, not 0.0000.
TEST_F(Messages, AnInterruptedRunReportsTheLossOfItsSteps) {
  const CliResult r = run_baton(
      "train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 1000000 --workers 1 "
      "--log-every 1000000 --eval-every 0 --device cpu",
      "timeout -s INT 10");
  const std::regex summary(R"(stopped after (\d+) steps: train loss (\d+\.\d+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, summary)) << r.out << r.err;
  EXPECT_GT(std::stod(m[2].str()), 0.0) << r.out;
}

}  // namespace
}  // namespace baton::cli
