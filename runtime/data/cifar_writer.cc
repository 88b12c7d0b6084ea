// CIFAR-10 binary writer: records are built in memory per file and written atomically.
#include "runtime/data/cifar_writer.h"

#include <filesystem>
#include <system_error>

#include "runtime/core/atomic_file.h"
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

// Samples [first, first + count) of `dataset` as CIFAR-10 records.
std::string records_of(const Dataset& dataset, int64_t first, int64_t count) {
  const int64_t record_bytes = cifar_record_bytes(CifarVariant::cifar10);
  std::string content(static_cast<size_t>(count * record_bytes), '\0');
  for (int64_t i = 0; i < count; ++i) {
    auto* record = reinterpret_cast<uint8_t*>(content.data()) + i * record_bytes;
    int64_t label = 0;
    dataset.read(first + i, record + 1, label);
    BATON_CHECK(label >= 0 && label < dataset.num_classes(), dataset.name(), ": sample ", first + i, " has label ",
                label, ", expected 0 .. ", dataset.num_classes() - 1);
    record[0] = static_cast<uint8_t>(label);
  }
  return content;
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

  std::vector<WrittenFile> written;
  auto write = [&](const std::string& file_name, const std::string& content, int64_t records) {
    const std::string path = (std::filesystem::path(directory) / file_name).string();
    write_file_atomically(path, content);
    written.push_back({path, records});
  };
  const std::vector<std::string> train_names = cifar_file_names(CifarVariant::cifar10, Split::train);
  int64_t first = 0;
  for (size_t k = 0; k < train_names.size(); ++k) {
    write(train_names[k], records_of(train, first, train_records[k]), train_records[k]);
    first += train_records[k];
  }
  write(cifar_file_names(CifarVariant::cifar10, Split::test).front(), records_of(test, 0, test.size()), test.size());
  std::string meta;
  for (const std::string& name : class_names) meta += name + "\n";
  write("batches.meta.txt", meta, 0);
  return written;
}

}  // namespace baton::data
