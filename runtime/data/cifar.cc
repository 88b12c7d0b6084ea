// CIFAR-10 / CIFAR-100 binary reader: file checks at open, then positional reads of single records.
#include "runtime/data/cifar.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <vector>

#include "runtime/core/error.h"

namespace baton::data {
namespace {

const char* variant_name(CifarVariant variant) { return variant == CifarVariant::cifar10 ? "cifar10" : "cifar100"; }

const char* variant_title(CifarVariant variant) { return variant == CifarVariant::cifar10 ? "CIFAR-10" : "CIFAR-100"; }

// "3073 bytes (1 record)" for `records` records of `record_bytes`.
std::string size_of_records(int64_t records, int64_t record_bytes) {
  return std::to_string(records * record_bytes) + " bytes (" + std::to_string(records) +
         (records == 1 ? " record)" : " records)");
}

}  // namespace

int64_t cifar_label_bytes(CifarVariant variant) { return variant == CifarVariant::cifar10 ? 1 : 2; }

int64_t cifar_record_bytes(CifarVariant variant) { return cifar_label_bytes(variant) + kCifarImageBytes; }

std::vector<std::string> cifar_file_names(CifarVariant variant, Split split) {
  if (variant == CifarVariant::cifar100) return {split == Split::train ? "train.bin" : "test.bin"};
  if (split == Split::test) return {"test_batch.bin"};
  std::vector<std::string> names;
  for (int i = 1; i <= kCifar10TrainFiles; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  return names;
}

CifarDataset::CifarDataset(CifarVariant variant, std::string directory, Split split)
    : variant_(variant), directory_(std::move(directory)), split_(split) {
  const std::vector<std::string> names = cifar_file_names(variant, split);
  for (const std::string& file_name : names) {
    const std::string path = (std::filesystem::path(directory_) / file_name).string();
    try {
      File file{RecordFile(path), size_, 0};
      check_file(file);
      file.records = static_cast<int64_t>(file.file.size()) / cifar_record_bytes(variant_);
      size_ += file.records;
      files_.push_back(std::move(file));
    } catch (Error& e) {
      e.add_context(std::string("opening ") + variant_name(variant) + ":" + directory_ + " (" + split_name(split) +
                    "), which expects the " + variant_title(variant) + " binary files " +
                    (names.size() > 1 ? names.front() + " .. " + names.back() : names.front()));
      throw;
    }
  }
}

void CifarDataset::check_file(const File& file) const {
  const int64_t record = cifar_record_bytes(variant_);
  const int64_t bytes = static_cast<int64_t>(file.file.size());
  const int64_t whole = bytes / record;
  if (bytes == 0 || bytes % record != 0) {
    const std::string expected = whole == 0
                                     ? size_of_records(1, record)
                                     : size_of_records(whole, record) + " or " + size_of_records(whole + 1, record);
    BATON_FAIL("'", file.file.path(), "' has ", bytes, " bytes, which is not a whole number of ",
               variant_title(variant_), " records of ", record, " bytes (", cifar_label_bytes(variant_),
               " label byte(s) + ", kCifarImageBytes, " pixel bytes): expected ", expected,
               "; the published files are ", size_of_records(kCifarRecordsPerFile, record));
  }
  // Every record's label(s), read a block of records at a time.
  constexpr int64_t kBlock = 1024;
  std::vector<uint8_t> block(static_cast<size_t>(kBlock * record));
  for (int64_t first = 0; first < whole; first += kBlock) {
    const int64_t count = std::min(kBlock, whole - first);
    file.file.read(static_cast<size_t>(first * record), block.data(), static_cast<size_t>(count * record));
    for (int64_t r = first; r < first + count; ++r) {
      const uint8_t* labels = block.data() + (r - first) * record;
      if (variant_ == CifarVariant::cifar10) {
        BATON_CHECK(labels[0] < 10, "'", file.file.path(), "' record ", r, " (byte offset ", r * record, "): label ",
                    int{labels[0]}, " is out of range: expected 0..9");
      } else {
        BATON_CHECK(labels[0] < 20, "'", file.file.path(), "' record ", r, " (byte offset ", r * record,
                    "): coarse label ", int{labels[0]}, " is out of range: expected 0..19");
        BATON_CHECK(labels[1] < 100, "'", file.file.path(), "' record ", r, " (byte offset ", r * record + 1,
                    "): fine label ", int{labels[1]}, " is out of range: expected 0..99");
      }
    }
  }
}

void CifarDataset::read(int64_t index, uint8_t* pixels, int64_t& label) const {
  check_index(index);
  const auto it =
      std::upper_bound(files_.begin(), files_.end(), index, [](int64_t i, const File& f) { return i < f.first; });
  const File& file = *(it - 1);
  const int64_t label_bytes = cifar_label_bytes(variant_);
  const auto offset = static_cast<size_t>((index - file.first) * cifar_record_bytes(variant_));
  std::array<uint8_t, 2 + kCifarImageBytes> record;  // one read per sample
  file.file.read(offset, record.data(), static_cast<size_t>(label_bytes + kCifarImageBytes));
  label = record[static_cast<size_t>(label_bytes - 1)];  // CIFAR-100: the fine label, the second byte
  std::memcpy(pixels, record.data() + label_bytes, kCifarImageBytes);
}

std::string CifarDataset::name() const {
  return std::string(variant_name(variant_)) + ":" + directory_ + " (" + split_name(split_) + ")";
}

}  // namespace baton::data
