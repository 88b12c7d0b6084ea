// The CIFAR-10 / CIFAR-100 readers on small files written here: contents, size and label checks
// whose messages name the file and record, and open_dataset's spec forms.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "runtime/data/cifar.h"
#include "runtime/data/dataset.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

using baton::testing::ScratchDir;
using baton::testing::write_file;

uint8_t record_pixel(int64_t file, int64_t record, int64_t k) {
  return static_cast<uint8_t>((file * 101 + record * 29 + k * 7 + 3) % 256);
}

// `records` records with labels (label_bytes each, from `labels(record)`) and known pixels.
template <typename LabelFn>
std::string cifar_file(int64_t file, int64_t records, int64_t label_bytes, LabelFn labels) {
  const int64_t record_bytes = label_bytes + kCifarImageBytes;
  std::string bytes(static_cast<size_t>(records * record_bytes), '\0');
  for (int64_t r = 0; r < records; ++r) {
    const std::vector<uint8_t> label = labels(r);
    EXPECT_EQ(static_cast<int64_t>(label.size()), label_bytes);
    for (int64_t k = 0; k < record_bytes; ++k) {
      bytes[static_cast<size_t>(r * record_bytes + k)] =
          static_cast<char>(k < label_bytes ? label[static_cast<size_t>(k)] : record_pixel(file, r, k - label_bytes));
    }
  }
  return bytes;
}

// data_batch_1..5.bin with 3, 2, 3, 1, 2 records (label = (file + record) % 10) and test_batch.bin
// with 4 records.
void write_cifar10(const ScratchDir& dir) {
  const int64_t counts[] = {3, 2, 3, 1, 2};
  for (int64_t f = 0; f < 5; ++f) {
    write_file(dir.file("data_batch_" + std::to_string(f + 1) + ".bin"),
               cifar_file(f, counts[f], 1, [&](int64_t r) { return std::vector<uint8_t>{uint8_t((f + r) % 10)}; }));
  }
  write_file(dir.file("test_batch.bin"),
             cifar_file(9, 4, 1, [](int64_t r) { return std::vector<uint8_t>{uint8_t(9 - r)}; }));
}

TEST(Cifar10, ReadsRecordsAcrossFilesInOrder) {
  ScratchDir dir;
  write_cifar10(dir);
  CifarDataset train(CifarVariant::cifar10, dir.path().string(), Split::train);
  EXPECT_EQ(train.size(), 11);
  EXPECT_EQ(train.image_shape(), Shape({3, 32, 32}));
  EXPECT_EQ(train.num_classes(), 10);
  // Sample 6 is file 2 (third file, 0-based), record 1.
  std::vector<uint8_t> pixels(kCifarImageBytes);
  int64_t label = -1;
  train.read(6, pixels.data(), label);
  EXPECT_EQ(label, (2 + 1) % 10);
  for (int64_t k = 0; k < kCifarImageBytes; ++k) ASSERT_EQ(pixels[k], record_pixel(2, 1, k)) << "byte " << k;
  train.read(10, pixels.data(), label);  // last record of data_batch_5
  EXPECT_EQ(label, (4 + 1) % 10);
  EXPECT_EQ(pixels[100], record_pixel(4, 1, 100));

  CifarDataset test(CifarVariant::cifar10, dir.path().string(), Split::test);
  EXPECT_EQ(test.size(), 4);
  test.read(3, pixels.data(), label);
  EXPECT_EQ(label, 6);
  EXPECT_EQ(pixels[3071], record_pixel(9, 3, 3071));
  EXPECT_ERROR_MENTIONS("sample index 4 is out of range", test.read(4, pixels.data(), label));
}

// A file cut short while a run reads it (a copy still in progress, a full disk) was a SIGBUS with
// the files memory-mapped; now the read fails naming the file.
TEST(Cifar10, AFileTruncatedWhileInUseIsAnErrorNamingIt) {
  ScratchDir dir;
  write_cifar10(dir);
  CifarDataset test(CifarVariant::cifar10, dir.path().string(), Split::test);
  std::vector<uint8_t> pixels(kCifarImageBytes);
  int64_t label = -1;
  test.read(3, pixels.data(), label);
  std::filesystem::resize_file(dir.file("test_batch.bin"), 2 * (1 + kCifarImageBytes) + 10);
  test.read(1, pixels.data(), label);  // still there
  EXPECT_EQ(label, 8);
  EXPECT_ERROR_MENTIONS("test_batch.bin' became shorter while in use (truncated or rewritten?): byte 9219 of the 12292",
                        test.read(3, pixels.data(), label));
}

TEST(Cifar10, TruncatedOrOversizedFilesNameTheFileAndTheSizeExpected) {
  ScratchDir dir;
  write_cifar10(dir);
  const std::string good = cifar_file(2, 3, 1, [](int64_t) { return std::vector<uint8_t>{1}; });
  const std::string path = dir.file("data_batch_3.bin");
  write_file(path, good.substr(0, good.size() - 1));
  const std::string truncated =
      ::baton::testing::error_message([&] { CifarDataset(CifarVariant::cifar10, dir.path().string(), Split::train); });
  EXPECT_NE(truncated.find(path), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("has 9218 bytes"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("expected 6146 bytes (2 records) or 9219 bytes (3 records)"), std::string::npos)
      << truncated;

  write_file(path, good + "x");
  EXPECT_ERROR_MENTIONS("has 9220 bytes, which is not a whole number of CIFAR-10 records of 3073 bytes",
                        CifarDataset(CifarVariant::cifar10, dir.path().string(), Split::train));
  write_file(path, "");
  EXPECT_ERROR_MENTIONS("has 0 bytes", CifarDataset(CifarVariant::cifar10, dir.path().string(), Split::train));
}

TEST(Cifar10, BadLabelNamesTheFileAndRecord) {
  ScratchDir dir;
  write_cifar10(dir);
  const std::string path = dir.file("test_batch.bin");
  write_file(path, cifar_file(9, 4, 1, [](int64_t r) { return std::vector<uint8_t>{uint8_t(r == 2 ? 10 : 0)}; }));
  EXPECT_ERROR_MENTIONS("'" + path + "' record 2 (byte offset 6146): label 10 is out of range: expected 0..9",
                        CifarDataset(CifarVariant::cifar10, dir.path().string(), Split::test));
}

TEST(Cifar10, MissingFileIsNamedWithTheFilesExpected) {
  ScratchDir dir;
  write_cifar10(dir);
  std::filesystem::remove(dir.file("data_batch_4.bin"));
  const std::string message =
      ::baton::testing::error_message([&] { CifarDataset(CifarVariant::cifar10, dir.path().string(), Split::train); });
  EXPECT_NE(message.find("cannot open '" + dir.file("data_batch_4.bin") + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("data_batch_1.bin .. data_batch_5.bin"), std::string::npos) << message;
}

TEST(Cifar100, UsesTheFineLabelAndChecksBoth) {
  ScratchDir dir;
  write_file(dir.file("train.bin"), cifar_file(0, 5, 2, [](int64_t r) {
               return std::vector<uint8_t>{uint8_t(r), uint8_t(90 + r)};
             }));
  write_file(dir.file("test.bin"), cifar_file(1, 2, 2, [](int64_t r) {
               return std::vector<uint8_t>{uint8_t(19), uint8_t(r)};
             }));
  const auto train = open_dataset("cifar100:" + dir.path().string(), Split::train, 0);
  EXPECT_EQ(train->size(), 5);
  EXPECT_EQ(train->num_classes(), 100);
  std::vector<uint8_t> pixels(kCifarImageBytes);
  int64_t label = -1;
  train->read(4, pixels.data(), label);
  EXPECT_EQ(label, 94);
  EXPECT_EQ(pixels[0], record_pixel(0, 4, 0));
  EXPECT_EQ(pixels[3071], record_pixel(0, 4, 3071));

  write_file(dir.file("test.bin"), cifar_file(1, 2, 2, [](int64_t r) {
               return std::vector<uint8_t>{uint8_t(r == 1 ? 20 : 0), 5};
             }));
  EXPECT_ERROR_MENTIONS("test.bin' record 1 (byte offset 3074): coarse label 20 is out of range: expected 0..19",
                        open_dataset("cifar100:" + dir.path().string(), Split::test, 0));
  write_file(dir.file("test.bin"), cifar_file(1, 2, 2, [](int64_t r) {
               return std::vector<uint8_t>{0, uint8_t(r == 0 ? 100 : 5)};
             }));
  EXPECT_ERROR_MENTIONS("test.bin' record 0 (byte offset 1): fine label 100 is out of range: expected 0..99",
                        open_dataset("cifar100:" + dir.path().string(), Split::test, 0));
  write_file(dir.file("test.bin"), std::string(3073, '\0'));
  EXPECT_ERROR_MENTIONS("records of 3074 bytes (2 label byte(s) + 3072 pixel bytes): expected 3074 bytes (1 record)",
                        open_dataset("cifar100:" + dir.path().string(), Split::test, 0));
}

TEST(OpenDataset, UnknownSpecsListTheAcceptedForms) {
  for (const char* spec : {"imagenet", "cifar10", "cifar10:", "shapes:3", "cifar"}) {
    const std::string message = ::baton::testing::error_message([&] { open_dataset(spec, Split::train, 0); });
    EXPECT_NE(message.find(spec), std::string::npos) << message;
  }
  EXPECT_ERROR_MENTIONS("expected one of shapes, synthetic[:CxHxW[:CLASSES[:SAMPLES]]]",
                        open_dataset("imagenet", Split::train, 0));
  EXPECT_ERROR_MENTIONS("the directory after 'cifar10:' is missing", open_dataset("cifar10:", Split::train, 0));
}

}  // namespace
}  // namespace baton::data
