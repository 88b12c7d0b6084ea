// Writing a dataset in the CIFAR-10 binary format (what `baton make-dataset` does), so any
// CIFAR-10 reader, ours included (cifar10:DIR), can load it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"

namespace baton::data {

struct WrittenFile {
  std::string path;
  int64_t records = 0;
};

// Records per data_batch_k.bin for `train_size` training samples: split evenly over the five files,
// the first train_size % 5 files taking one more (23 samples: 5, 5, 5, 4, 4). At least five needed.
std::vector<int64_t> cifar10_train_file_records(int64_t train_size);

// Writes data_batch_1..5.bin (train, in index order, split as above), test_batch.bin (test) and
// batches.meta.txt (`class_names`, one per line) into `directory`, creating it when missing. Both
// datasets must have [3, 32, 32] images and at most 10 classes, matching class_names. Each file is
// written atomically (temporary file, fsync, rename). Returns the files written.
std::vector<WrittenFile> write_cifar10_files(const Dataset& train, const Dataset& test, const std::string& directory,
                                             const std::vector<std::string>& class_names);

}  // namespace baton::data
