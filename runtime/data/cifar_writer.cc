// CIFAR-10 binary writer: records are streamed into each file (a bounded chunk in memory at a time),
// which is committed atomically; the space they need is checked against the disk before any is written.
#include "runtime/data/cifar_writer.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "runtime/core/atomic_file.h"
#include "runtime/core/byte_size.h"
#include "runtime/core/error.h"
#include "runtime/data/cifar.h"

namespace baton::data {
namespace {

void check_writable(const Dataset& dataset, size_t class_count) {
  BATON_CHECK(dataset.image_shape() == Shape({3, 32, 32}), "cannot write ", dataset.name(),
              " as CIFAR-10: its images are ", dataset.image_shape().str(), ", expected [3, 32, 32]");
  BATON_CHECK(dataset.num_classes() <= 10 && dataset.num_classes() == static_cast<int64_t>(class_count),
              "cannot write ", dataset.name(), " as CIFAR-10: it has ", dataset.num_classes(), " classes and ",
              class_count, " class names were given; expected the same number, at most 10");
}

// Records built in memory at a time while a file is written (~12 MB).
constexpr int64_t kRecordsPerChunk = 4096;

// Writes samples [first, first + count) of `dataset` as CIFAR-10 records into `path`, atomically.
void write_records(const Dataset& dataset, int64_t first, int64_t count, const std::string& path) {
  const int64_t record_bytes = cifar_record_bytes(CifarVariant::cifar10);
  AtomicFileWriter file(path);
  std::string chunk;
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min(kRecordsPerChunk, count - done);
    chunk.assign(static_cast<size_t>(n * record_bytes), '\0');
    for (int64_t i = 0; i < n; ++i, ++done) {
      auto* record = reinterpret_cast<uint8_t*>(chunk.data()) + i * record_bytes;
      int64_t label = 0;
      dataset.read(first + done, record + 1, label);
      BATON_CHECK(label >= 0 && label < dataset.num_classes(), dataset.name(), ": sample ", first + done, " has label ",
                  label, ", expected 0 .. ", dataset.num_classes() - 1);
      record[0] = static_cast<uint8_t>(label);
    }
    file.write(chunk.data(), chunk.size());
  }
  file.commit();
}

// The records must fit on the disk of `directory` (created already): refused before any is written.
void check_space(const Dataset& train, const Dataset& test, const std::string& directory) {
  const double bytes =
      static_cast<double>(train.size() + test.size()) * static_cast<double>(cifar_record_bytes(CifarVariant::cifar10));
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(directory, error);
  BATON_CHECK(error || bytes <= static_cast<double>(space.available), "cannot write ", train.size(), " train and ",
              test.size(), " test images into '", directory, "': they take ", decimal_bytes(bytes), " (",
              cifar_record_bytes(CifarVariant::cifar10), " bytes each) and its disk has ",
              decimal_bytes(static_cast<double>(space.available)), " free");
}

}  // namespace

std::vector<int64_t> cifar10_train_file_records(int64_t train_size) {
  BATON_CHECK(train_size >= kCifar10TrainFiles, "CIFAR-10 training data needs at least ", kCifar10TrainFiles,
              " samples (one per data_batch file), not ", train_size);
  std::vector<int64_t> records;
  for (int64_t k = 0; k < kCifar10TrainFiles; ++k) {
    records.push_back(train_size / kCifar10TrainFiles + (k < train_size % kCifar10TrainFiles ? 1 : 0));
  }
  return records;
}

std::vector<WrittenFile> write_cifar10_files(const Dataset& train, const Dataset& test, const std::string& directory,
                                             const std::vector<std::string>& class_names) {
  check_writable(train, class_names.size());
  check_writable(test, class_names.size());
  const std::vector<int64_t> train_records = cifar10_train_file_records(train.size());
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  BATON_CHECK(!error, "cannot create the directory '", directory, "': ", error.message());

  check_space(train, test, directory);

  std::vector<WrittenFile> written;
  auto path_of = [&](const std::string& file_name) { return (std::filesystem::path(directory) / file_name).string(); };
  const std::vector<std::string> train_names = cifar_file_names(CifarVariant::cifar10, Split::train);
  int64_t first = 0;
  for (size_t k = 0; k < train_names.size(); ++k) {
    write_records(train, first, train_records[k], path_of(train_names[k]));
    written.push_back({path_of(train_names[k]), train_records[k]});
    first += train_records[k];
  }
  const std::string test_name = cifar_file_names(CifarVariant::cifar10, Split::test).front();
  write_records(test, 0, test.size(), path_of(test_name));
  written.push_back({path_of(test_name), test.size()});
  std::string meta;
  for (const std::string& name : class_names) meta += name + "\n";
  write_file_atomically(path_of("batches.meta.txt"), meta);
  written.push_back({path_of("batches.meta.txt"), 0});
  return written;
}

}  // namespace baton::data
