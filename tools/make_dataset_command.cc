// `baton make-dataset shapes --out DIR`: writes a generated dataset in the CIFAR-10 binary format,
// readable back as cifar10:DIR (by baton or any CIFAR-10 reader).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/data/cifar_writer.h"
#include "runtime/data/shapes.h"
#include "tools/commands.h"
#include "tools/flag_checks.h"

namespace baton::cli {
namespace {

struct MakeDatasetArgs {
  std::string source;
  std::string out;
  int64_t train = data::ShapesDataset::kDefaultTrainSize;
  int64_t test = data::ShapesDataset::kDefaultTestSize;
  uint64_t seed = 0;
};

void make_dataset(const MakeDatasetArgs& args) {
  const data::ShapesDataset train(data::Split::train, args.seed, args.train);
  const data::ShapesDataset test(data::Split::test, args.seed, args.test);
  for (const data::WrittenFile& file :
       data::write_cifar10_files(train, test, args.out, data::ShapesDataset::class_names())) {
    if (file.records > 0) {
      std::printf("wrote %s (%lld records)\n", file.path.c_str(), static_cast<long long>(file.records));
    } else {
      std::printf("wrote %s\n", file.path.c_str());
    }
  }
  std::printf("%s: %lld train and %lld test images, seed %llu; read it as cifar10:%s\n", args.source.c_str(),
              static_cast<long long>(args.train), static_cast<long long>(args.test),
              static_cast<unsigned long long>(args.seed), args.out.c_str());
}

}  // namespace

void add_make_dataset_command(CLI::App& app) {
  auto args = std::make_shared<MakeDatasetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "make-dataset", "Write a generated dataset in the CIFAR-10 binary format (data_batch_1..5.bin, test_batch.bin)");
  cmd->add_option("source", args->source, "What to generate: shapes (ten classes of drawn shapes, 32x32 RGB)")
      ->required()
      ->check(CLI::IsMember({"shapes"}));
  cmd->add_option("--out", args->out, "Directory to write (created when missing)")->required();
  cmd->add_option("--train", args->train, "Training images, split evenly over the five data_batch files")
      ->check(CLI::Range(int64_t{5}, int64_t{1} << 31))
      ->capture_default_str();
  cmd->add_option("--test", args->test, "Test images")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Generator seed")->check(whole_number(0))->capture_default_str();
  cmd->callback([args] { make_dataset(*args); });
}

}  // namespace baton::cli
