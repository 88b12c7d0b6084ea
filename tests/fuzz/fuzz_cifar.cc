// libFuzzer target: a CIFAR-10 test file (test_batch.bin): size and label checks at open, then every
// record read.
#include <cstdint>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/data/cifar.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = baton::fuzz::as_file(data, size, "test_batch.bin");
  try {
    const baton::data::CifarDataset test(baton::data::CifarVariant::cifar10, dir, baton::data::Split::test);
    std::vector<uint8_t> pixels(baton::data::kCifarImageBytes);
    int64_t label = 0;
    for (int64_t i = 0; i < test.size(); ++i) test.read(i, pixels.data(), label);
  } catch (const baton::Error&) {
  }
  return 0;
}
