// CIFAR-10 and CIFAR-100 in their binary formats, memory-mapped. Records are label byte(s) then
// 3,072 pixel bytes (1,024 R, 1,024 G, 1,024 B, each a 32x32 row-major plane), with no header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/data/record_file.h"

namespace baton::data {

enum class CifarVariant { cifar10, cifar100 };

inline constexpr int64_t kCifarImageBytes = 3 * 32 * 32;
inline constexpr int64_t kCifarRecordsPerFile = 10000;  // in the published files
inline constexpr int kCifar10TrainFiles = 5;

// Label bytes before the pixels: 1 for CIFAR-10, 2 (coarse, fine) for CIFAR-100.
int64_t cifar_label_bytes(CifarVariant variant);
int64_t cifar_record_bytes(CifarVariant variant);
// The files of a split, in reading order: data_batch_1..5.bin / test_batch.bin (CIFAR-10),
// train.bin / test.bin (CIFAR-100).
std::vector<std::string> cifar_file_names(CifarVariant variant, Split split);

class CifarDataset : public Dataset {
 public:
  // Maps the split's files in `directory` and checks them: every file's size must be a positive
  // multiple of the record size (the published files hold exactly 10,000 records; files written by
  // `baton make-dataset` may hold any number), every label in range. Errors name the file and the
  // record.
  CifarDataset(CifarVariant variant, std::string directory, Split split);

  int64_t size() const override { return size_; }
  Shape image_shape() const override { return Shape{3, 32, 32}; }
  int64_t num_classes() const override { return variant_ == CifarVariant::cifar10 ? 10 : 100; }
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override;
  std::string name() const override;

 private:
  struct File {
    RecordFile file;
    int64_t first = 0;  // index of its first record in the dataset
    int64_t records = 0;
  };
  void check_file(const File& file) const;

  CifarVariant variant_;
  std::string directory_;
  Split split_;
  std::vector<File> files_;
  int64_t size_ = 0;
};

}  // namespace baton::data
