// `baton train` run as a user runs it: a config file with flags overriding it, the metrics log,
// Ctrl-C (SIGINT) finishing the step and saving a checkpoint, --resume continuing from it, and the
// pipeline (--stages): stage table, predicted and measured step times, the two-process trace, errors.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> metrics_lines(const fs::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

size_t metrics_lines_count(const fs::path& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty() && line.back() == '}';
  return n;
}

class TrainCommand : public CliTest {
 protected:
  // Starts `baton train <args>` with stdout and stderr in files of the test directory.
  pid_t start(const std::string& args, const std::string& name) { return start_baton("train " + args, name); }

  int run(const std::string& args, const std::string& name) {
    return wait_for(start(args, name), std::chrono::seconds(300));
  }

  // Ctrl-C after two logged steps of `baton train <kSmallRun> <flags>` with a checkpoint directory:
  // exit 0 within a step and a checkpoint; --resume then continues at the next step.
  void check_sigint_and_resume(const std::string& flags, int signal = SIGINT);
};

constexpr const char* kSmallRun = "--model resnet20 --data synthetic:3x32x32:10:256 --device cpu --workers 1";

TEST_F(TrainCommand, FlagsOverrideTheConfigFileAndMetricsAreLogged) {
  const fs::path config = dir_ / "run.json";
  std::ofstream(config) << R"({"model": "vgg11", "data": "synthetic:3x32x32:10:64", "steps": 5, "batch_size": 16,
                              "device": "cpu", "log_every": 1, "eval_every": 1, "lr_schedule": {"type": "constant", "base_lr": 0.05}})";
  const fs::path metrics = dir_ / "metrics.jsonl";
  ASSERT_EQ(run(std::string("--config ") + config.string() + " " + kSmallRun + " --steps 3 --batch-size 8 --metrics " +
                    metrics.string(),
                "run"),
            0)
      << read_file_text(dir_ / "run.err");
  const std::string out = read_file_text(dir_ / "run.out");
  EXPECT_NE(out.find("resnet20"), std::string::npos) << out;  // --model overrides the file's vgg11
  const std::vector<nlohmann::json> lines = metrics_lines(metrics);
  int train_lines = 0, eval_lines = 0;
  for (const nlohmann::json& l : lines) {
    ASSERT_TRUE(l.contains("epoch") && l.contains("step")) << l.dump();
    if (l["type"] == "train") {
      ++train_lines;
      EXPECT_TRUE(l["loss"].is_number()) << l.dump();
      EXPECT_DOUBLE_EQ(l["lr"].get<double>(), 0.05) << l.dump();  // the file's schedule is kept
    } else if (l["type"] == "eval") {
      ++eval_lines;
      EXPECT_GE(l["top1"].get<double>(), 0.0);
      EXPECT_LE(l["top1"].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(train_lines, 3);  // --steps 3 overrides the file's 5
  EXPECT_GE(eval_lines, 1);
}

// A bare --data synthetic fits the model (ResNet-20: 32 px, 10 classes) and has a small test set.
TEST_F(TrainCommand, BareSyntheticDataFitsTheModelWithASmallTestSet) {
  const CliResult r = run_baton(
      "train --model resnet20 --data synthetic --steps 1 --batch-size 8 --workers 1 "
      "--eval-every 0 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on synthetic:3x32x32:10:1000000 (train, seed 0): 1000000 train / 10000 test samples"),
            std::string::npos)
      << r.out;
}

TEST_F(TrainCommand, BadFlagsAndConfigsAreOneLineErrors) {
  EXPECT_NE(run("--model resnet20 --data nosuchdata --device cpu --steps 1", "data"), 0);
  EXPECT_NE(read_file_text(dir_ / "data.err").find("nosuchdata"), std::string::npos)
      << read_file_text(dir_ / "data.err");
  const fs::path config = dir_ / "bad.json";
  std::ofstream(config) << R"({"model": "resnet20", "batch_sise": 8})";
  EXPECT_NE(run("--config " + config.string(), "config"), 0);
  const std::string err = read_file_text(dir_ / "config.err");
  EXPECT_NE(err.find("batch_sise"), std::string::npos) << err;
  EXPECT_NE(err.find("bad.json"), std::string::npos) << err;
}

void TrainCommand::check_sigint_and_resume(const std::string& flags, int signal) {
  const fs::path checkpoints = dir_ / "ckpt", metrics = dir_ / "metrics.jsonl";
  const std::string common = std::string(kSmallRun) + " " + flags +
                             " --batch-size 8 --log-every 1 --eval-every 0 --checkpoint-dir " + checkpoints.string() +
                             " --metrics " + metrics.string();
  const pid_t pid = start(common + " --steps 100000", "first");
  // Wait for two logged steps, then press Ctrl-C.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (metrics_lines_count(metrics) < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(metrics_lines_count(metrics), 2) << read_file_text(dir_ / "first.err");
  const auto interrupted_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, signal), 0);
  ASSERT_EQ(wait_for(pid, std::chrono::seconds(60)), 0) << read_file_text(dir_ / "first.err");
  EXPECT_LT(std::chrono::steady_clock::now() - interrupted_at, std::chrono::seconds(30));  // one step, not the run
  const std::string first_out = read_file_text(dir_ / "first.out");
  EXPECT_NE(first_out.find("checkpoint: "), std::string::npos) << first_out;
  ASSERT_TRUE(fs::exists(checkpoints));
  int64_t last_step = -1;
  for (const nlohmann::json& l : metrics_lines(metrics)) last_step = std::max(last_step, l["step"].get<int64_t>());
  ASSERT_GE(last_step, 1);

  const size_t before = metrics_lines(metrics).size();
  ASSERT_EQ(run(common + " --resume " + checkpoints.string() + " --steps " + std::to_string(last_step + 3), "resumed"),
            0)
      << read_file_text(dir_ / "resumed.err");
  const std::vector<nlohmann::json> lines = metrics_lines(metrics);
  ASSERT_GT(lines.size(), before);
  // The resumed run picks up after the interrupted one's last step and stops at --steps.
  EXPECT_EQ(lines[before]["step"].get<int64_t>(), last_step + 1) << lines[before].dump();
  EXPECT_EQ(lines.back()["step"].get<int64_t>(), last_step + 3) << lines.back().dump();
}

TEST_F(TrainCommand, SigintSavesACheckpointAndResumeContinues) { check_sigint_and_resume(""); }

// SIGTERM (what schedulers send before they kill) saves as Ctrl-C does.
TEST_F(TrainCommand, SigtermSavesAPipelinedCheckpointAndResumeContinues) {
  check_sigint_and_resume("--stages 2 --micro-batches 2", SIGTERM);  // --device cpu: cpu:0, cpu:1
}

constexpr const char* kPipelineRun =
    "--model resnet20 --data synthetic:3x32x32:10:64 --workers 1 --batch-size 16 --eval-every 0 --log-every 1";

TEST_F(TrainCommand, PipelinePrintsTheStageTableTrainsAndTracesBothTimelines) {
  const fs::path metrics = dir_ / "metrics.jsonl", trace = dir_ / "trace.json";
  ASSERT_EQ(run(std::string(kPipelineRun) + " --stages 2 --micro-batches 4 --devices cpu:0,cpu:1 --steps 3 --metrics " +
                    metrics.string() + " --trace " + trace.string(),
                "pipe"),
            0)
      << read_file_text(dir_ / "pipe.err");
  const std::string out = read_file_text(dir_ / "pipe.out");
  const size_t table = out.find("fwd ms"), first_step = out.find("step 1");
  ASSERT_NE(table, std::string::npos) << out;
  ASSERT_NE(first_step, std::string::npos) << out;
  EXPECT_LT(table, first_step) << out;  // the stage table comes first
  EXPECT_NE(out.find("1f1b M=4"), std::string::npos) << out;
  EXPECT_NE(out.find("cpu:1"), std::string::npos) << out;
  EXPECT_NE(out.find("step time: predicted "), std::string::npos) << out;
  EXPECT_NE(out.find(" ms, measured "), std::string::npos) << out;

  std::vector<int64_t> steps;
  for (const nlohmann::json& l : metrics_lines(metrics)) {
    if (l["type"] == "train") steps.push_back(l["step"].get<int64_t>());
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3}));

  const nlohmann::json parsed = nlohmann::json::parse(read_file_text(trace));
  std::map<int, std::string> processes;
  std::map<int, int> events, forwards;
  for (const nlohmann::json& e : parsed["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X") {
      ++events[e["pid"].get<int>()];
      if (e["cat"] == "forward") ++forwards[e["pid"].get<int>()];
    }
  }
  EXPECT_EQ(processes[0], "predicted");
  EXPECT_EQ(processes[1], "measured");
  EXPECT_EQ(forwards[0], 2 * 4);      // one predicted step: 2 stages x 4 micro-batches
  EXPECT_EQ(forwards[1], 3 * 2 * 4);  // three measured steps
  EXPECT_GT(events[0], forwards[0]);
  EXPECT_GT(events[1], forwards[1]);
}

TEST_F(TrainCommand, BadPipelineFlagsAreOneLineErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--stages 0", "--stages: must be a whole number from 1 to 2147483647, got 0"},
      {"--stages 2 --micro-batches 0", "--micro-batches: must be a whole number from 1"},
      {"--seed -1", "--seed: must be a whole number from 0 up, got -1"},
      {"--steps 99999999999999999999", "--steps: must be a whole number from 0 up, got 99999999999999999999"},
      {"--model-spec spec.json", "--model resnet20 and --model-spec spec.json name two models: give one"},
      {"--nosuch", "The following argument was not expected: --nosuch (baton train --help lists the options)"},
      {"--stages 2 --micro-batches 3", "does not divide the batch size 16"},
      {"--stages 2 --schedule zigzag", "unknown schedule 'zigzag'"},
      {"--stages 500", "the model has only"},
      {"--micro-batches 4", "need --stages"},
  };
  int i = 0;
  for (const auto& [flags, expected] : cases) {
    const std::string name = "bad" + std::to_string(i++);
    EXPECT_EQ(run(std::string(kPipelineRun) + " --steps 1 " + flags, name), 1) << flags;
    const std::string err = read_file_text(dir_ / (name + ".err"));
    EXPECT_NE(err.find(expected), std::string::npos) << flags << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << flags << ": " << err;
  }
}

}  // namespace
}  // namespace baton::cli
