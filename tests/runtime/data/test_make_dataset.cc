// Writing datasets in the CIFAR-10 binary format (what `baton make-dataset` does) and reading them
// back with the CIFAR-10 reader: identical samples, file sizes, the split over five files.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "runtime/data/cifar.h"
#include "runtime/data/cifar_writer.h"
#include "runtime/data/shapes.h"
#include "runtime/data/synthetic.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

using baton::testing::ScratchDir;

void expect_same_samples(const Dataset& expected, const Dataset& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(actual.image_shape(), expected.image_shape());
  std::vector<uint8_t> a(kCifarImageBytes), e(kCifarImageBytes);
  for (int64_t i = 0; i < expected.size(); ++i) {
    int64_t la = -1, le = -2;
    actual.read(i, a.data(), la);
    expected.read(i, e.data(), le);
    ASSERT_EQ(la, le) << "sample " << i;
    ASSERT_EQ(a, e) << "sample " << i;
  }
}

TEST(MakeDataset, ShapesRoundTripThroughTheCifar10Reader) {
  ScratchDir dir;
  const ShapesDataset train(Split::train, 5, 23), test(Split::test, 5, 7);
  const auto written = write_cifar10_files(train, test, dir.file("out"), ShapesDataset::class_names());
  ASSERT_EQ(written.size(), 7u);
  const int64_t expected_records[] = {5, 5, 5, 4, 4, 7};
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(written[k].records, expected_records[k]) << written[k].path;
    EXPECT_EQ(std::filesystem::file_size(written[k].path), static_cast<uintmax_t>(expected_records[k] * 3073))
        << written[k].path;
  }
  EXPECT_EQ(written[5].path, dir.file("out/test_batch.bin"));
  const auto train_back = open_dataset("cifar10:" + dir.file("out"), Split::train, 0);
  const auto test_back = open_dataset("cifar10:" + dir.file("out"), Split::test, 0);
  expect_same_samples(train, *train_back);
  expect_same_samples(test, *test_back);
  EXPECT_EQ(baton::testing::read_file(dir.file("out/batches.meta.txt")),
            "disk\nring\nsquare\nframe\ntriangle\ndiamond\nplus\ncross\nhorizontal_bar\nvertical_bar\n");
  // Nothing but the seven files (no temporaries left behind).
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) entries += entry.is_regular_file();
  EXPECT_EQ(entries, 7);
}

TEST(MakeDataset, TrainFilesSplitEvenlyFirstFilesTakeTheRemainder) {
  EXPECT_EQ(cifar10_train_file_records(50000), std::vector<int64_t>(5, 10000));
  EXPECT_EQ(cifar10_train_file_records(7), (std::vector<int64_t>{2, 2, 1, 1, 1}));
  EXPECT_EQ(cifar10_train_file_records(5), std::vector<int64_t>(5, 1));
  EXPECT_ERROR_MENTIONS("needs at least 5 samples", cifar10_train_file_records(4));
}

TEST(MakeDataset, RefusesDatasetsThatDoNotFitTheFormat) {
  ScratchDir dir;
  const SyntheticDataset big_images({Shape{3, 64, 64}, 10, 10}, Split::train, 0);
  const SyntheticDataset many_classes({Shape{3, 32, 32}, 11, 10}, Split::train, 0);
  const ShapesDataset shapes(Split::test, 0, 5);
  const std::vector<std::string> ten(10, "c");
  EXPECT_ERROR_MENTIONS("its images are [3, 64, 64], expected [3, 32, 32]",
                        write_cifar10_files(big_images, shapes, dir.path().string(), ten));
  EXPECT_ERROR_MENTIONS("it has 11 classes and 10 class names",
                        write_cifar10_files(many_classes, shapes, dir.path().string(), ten));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace baton::data
