// The model commands of the `baton` binary, run as a user runs them: `models`, `export-spec`
// (an atomic write whose spec rebuilds the model) and `info` (table and --json, from a model or a
// spec), and strict --input / --batch parsing with errors that name the flag.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "layers/builtin_layers.h"
#include "models/model_registry.h"
#include "models/model_summary.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

using ModelCommands = CliTest;

TEST_F(ModelCommands, ModelsListsEveryModelWithItsDefaultInput) {
  const CliResult r = run_baton("models");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const models::ModelInfo& m : models::list_models()) {
    EXPECT_NE(r.out.find(m.name + " "), std::string::npos) << m.name;
  }
  EXPECT_NE(r.out.find("resnet20         classification  3x32x32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mlp_autoencoder  reconstruction"), std::string::npos) << r.out;
}

TEST_F(ModelCommands, ExportSpecWritesASpecThatRebuildsTheModel) {
  const fs::path spec = dir_ / "resnet18.json";
  const CliResult r =
      run_baton("export-spec --model resnet18 --batch 4 --classes 10 --input 3x64x64 --out " + spec.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json written = nlohmann::json::parse(read_file_text(spec));
  models::ModelOptions o{.batch_size = 4, .num_classes = 10, .in_channels = 3, .image_size = 64};
  EXPECT_EQ(written, models::build_model("resnet18", o).to_json());
  const Graph back = Graph::from_json(written, layers::builtin_layers(), spec.string());
  EXPECT_EQ(back.value(back.outputs()[1]).shape, (Shape{4, 10}));
  // No temporary file is left beside it.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 3);  // the spec, stdout, stderr

  const fs::path inference = dir_ / "inference.json";
  ASSERT_EQ(run_baton("export-spec --model mobilenet_v2 --no-loss --out " + inference.string()).exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(read_file_text(inference))["outputs"], nlohmann::json({"classifier.1"}));
}

TEST_F(ModelCommands, InfoJsonGivesTotalsAndEveryNode) {
  const CliResult r = run_baton("info --model resnet50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["params"], 25'557'032);
  EXPECT_NEAR(j["macs"].get<double>(), 4.09e9, 0.01 * 4.09e9);
  const Graph g = models::build_model("resnet50", models::default_options("resnet50"));
  ASSERT_EQ(j["nodes"].size(), static_cast<size_t>(g.num_nodes()));
  const nlohmann::json& conv1 = j["nodes"][0];
  EXPECT_EQ(conv1["name"], "conv1");
  EXPECT_EQ(conv1["type"], "Conv2d");
  EXPECT_EQ(conv1["output_shape"], nlohmann::json({1, 64, 112, 112}));
  EXPECT_EQ(conv1["params"], 64 * 3 * 49);
  EXPECT_EQ(conv1["macs"], int64_t{64} * 112 * 112 * 3 * 49);
  EXPECT_EQ(conv1["activation_bytes"], 64 * 112 * 112 * 4);
  for (const nlohmann::json& node : j["nodes"]) {
    for (const char* key : {"name", "type", "output_shape", "params", "macs", "activation_bytes"}) {
      EXPECT_TRUE(node.contains(key)) << node.dump();
    }
  }
  // Topological order: every node's name appears after the nodes it reads.
  std::vector<std::string> names;
  for (const nlohmann::json& node : j["nodes"]) names.push_back(node["name"]);
  const auto position = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  EXPECT_LT(position("layer1.0.downsample.1"), position("layer1.0.add"));
  EXPECT_EQ(names.back(), "loss");
}

TEST_F(ModelCommands, InfoOfASpecFileAtAnotherBatchAndInput) {
  const fs::path spec = dir_ / "vgg11.json";
  ASSERT_EQ(run_baton("export-spec --model vgg11 --out " + spec.string()).exit_code, 0);
  const CliResult r = run_baton("info --model-spec " + spec.string() + " --batch 2 --input 3x64x64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["params"], 132'863'336);
  EXPECT_EQ(j["nodes"][0]["output_shape"], nlohmann::json({2, 64, 64, 64}));

  const CliResult table = run_baton("info --model resnet20 --batch 8");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("resnet20 (input 3x32x32, batch 8)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("layer3.2.conv2"), std::string::npos);
  EXPECT_NE(table.out.find("[8, 64, 8, 8]"), std::string::npos);
  EXPECT_NE(table.out.find("272,474"), std::string::npos) << table.out;
}

TEST_F(ModelCommands, BadInputsAreOneLineErrorsNamingTheFlag) {
  // Exit code 1, nothing on stdout, one line on stderr containing `message`.
  const auto expect_error = [&](const std::string& args, const std::string& message) {
    const CliResult r = run_baton(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  for (const std::string bad : {"3x224", "3x224x224x1", "3x0x224", "ax224x224", "3x-224x224", "3x224x", "3xx224",
                                "3X224X224", "3x224x224.0", "99999999999x2x2"}) {
    expect_error("info --model resnet18 --input " + bad, "--input: '" + bad + "' is not CxHxW");
  }
  expect_error("info --model resnet18 --input 3x224x160", "--input: '3x224x160' is not square");
  expect_error("export-spec --model resnet18 --batch 0 --out " + (dir_ / "x.json").string(),
               "--batch: '0' is not a positive integer");
  EXPECT_FALSE(fs::exists(dir_ / "x.json"));
  expect_error("info --model resnet19", "unknown model 'resnet19'; the models are: resnet18");
  expect_error("info --json", "give exactly one of --model and --model-spec");
  expect_error("info --model-spec " + (dir_ / "absent.json").string(), "absent.json: cannot open the graph spec");
}

TEST_F(ModelCommands, ExportSpecLeavesAnExistingFileAloneOnError) {
  const fs::path spec = dir_ / "keep.json";
  std::ofstream(spec) << "precious";
  const CliResult r = run_baton("export-spec --model alexnet --input 3x32x32 --out " + spec.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("features."), std::string::npos) << r.err;  // the node the small input breaks
  EXPECT_EQ(read_file_text(spec), "precious");
}

}  // namespace
}  // namespace baton::cli
