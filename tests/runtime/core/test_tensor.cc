// Tensor on CPU devices: allocation and statistics, views, copies, fill, errors, debug print.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/core/memory_stats.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

TEST(Tensor, FromVectorRoundTripsAndKnowsItsLayout) {
  const Stream s = Stream::create(Device::cpu());
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_vector(values, Shape{2, 3}, s);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.to_vector<float>(s), values);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
}

TEST(Tensor, SliceAndSplitAreZeroCopyViewsAlongDimensionZero) {
  const Stream s = Stream::create(Device::cpu());
  std::vector<double> values(10 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  Tensor t = Tensor::from_vector(values, Shape{10, 3}, s);
  Tensor rows = t.slice(2, 5);
  EXPECT_EQ(rows.shape(), (Shape{3, 3}));
  EXPECT_EQ(rows.storage(), t.storage());
  EXPECT_EQ(rows.data<double>()[0], 6.0);
  rows.data<double>()[0] = -1.0;  // writes through to the parent
  EXPECT_EQ(t.data<double>()[6], -1.0);

  const std::vector<Tensor> parts = t.split(4);
  ASSERT_EQ(parts.size(), 4u);
  const int64_t expected_rows[] = {3, 3, 2, 2};
  int64_t first_row = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(parts[i].size(0), expected_rows[i]);
    EXPECT_EQ(parts[i].data<double>(), t.data<double>() + first_row * 3);
    first_row += expected_rows[i];
  }
  EXPECT_EQ(t.reshape(Shape{30}).data_ptr(), t.data_ptr());
}

TEST(Tensor, BadViewsAndMismatchesAreErrors) {
  const Stream s = Stream::create(Device::cpu());
  Tensor t = Tensor::empty(Shape{4, 2}, DType::f32, s);
  EXPECT_THROW(t.slice(3, 5), Error);
  EXPECT_THROW(t.slice(-1, 2), Error);
  EXPECT_THROW(t.slice(3, 2), Error);
  EXPECT_THROW(t.split(0), Error);
  EXPECT_THROW(t.split(5), Error);
  EXPECT_THROW(t.reshape(Shape{3, 3}), Error);
  EXPECT_THROW(t.data<double>(), Error);
  EXPECT_THROW(t.to_vector<int32_t>(s), Error);
  Tensor other = Tensor::empty(Shape{4, 3}, DType::f32, s);
  EXPECT_THROW(t.copy_from(other, s), Error);
  EXPECT_THROW(Tensor::from_vector(std::vector<float>{1, 2}, Shape{3}, s), Error);
  EXPECT_THROW(Tensor().device(), Error);
}

TEST(Tensor, CopyBetweenCpuDevicesAndTo) {
  const Stream s = Stream::create(Device::cpu());
  Tensor a = testing::random_tensor(Shape{5, 7}, DType::f32, s, 11);
  Tensor b = a.to(Device::cpu(2), s);
  EXPECT_EQ(b.device(), Device::cpu(2));
  EXPECT_NE(b.data_ptr(), a.data_ptr());
  EXPECT_EQ(b.to_vector<float>(s), a.to_vector<float>(s));
}

TEST(Tensor, FillConvertsToEachDtype) {
  const Stream s = Stream::create(Device::cpu());
  for (DType d : kAllDTypes) {
    Tensor t = Tensor::empty(Shape{3, 5}, d, s);
    t.fill(3.0, s);
    for (double v : testing::to_doubles(t, s)) EXPECT_EQ(v, 3.0) << dtype_name(d);
  }
  Tensor bytes = Tensor::empty(Shape{2}, DType::u8, s);
  EXPECT_THROW(bytes.fill(300.0, s), Error);
  EXPECT_THROW(bytes.fill(1.5, s), Error);
}

TEST(Allocator, CpuStatisticsTrackCurrentAndPeak) {
  const Device dev = Device::cpu(9);  // a virtual device of its own, so other tests do not interfere
  const Stream s = Stream::create(dev);
  reset_peak_memory_stats(dev);
  const MemoryStats before = memory_stats(dev);
  {
    Tensor a = Tensor::empty(Shape{1000}, DType::f64, s);
    Tensor b = Tensor::empty(Shape{500}, DType::f32, s);
    const MemoryStats during = memory_stats(dev);
    EXPECT_EQ(during.current_bytes, before.current_bytes + 8000 + 2000);
    EXPECT_EQ(during.allocations, before.allocations + 2);
  }
  const MemoryStats after = memory_stats(dev);
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_EQ(after.peak_bytes, before.current_bytes + 10000);
}

TEST(Allocator, ImpossibleRequestIsAnOutOfMemoryErrorStatingTheRequest) {
  const Device dev = Device::cpu(8);  // a virtual device of its own, so other tests do not interfere
  const Stream s = Stream::create(dev);
  const MemoryStats before = memory_stats(dev);
  try {
    Tensor t = Tensor::empty(Shape{int64_t{1} << 60}, DType::u8, s);
    FAIL() << "allocated 2^60 bytes";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("1152921504606846976 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  // The failed request was never counted, so nothing is subtracted for it.
  EXPECT_EQ(memory_stats(dev).current_bytes, before.current_bytes);
  EXPECT_EQ(memory_stats(dev).allocations, before.allocations);
}

TEST(Tensor, PinnedHostTensorsWorkWithOrWithoutADriver) {
  Tensor t = Tensor::empty_host(Shape{16}, DType::f32, HostMemory::pinned);
  EXPECT_EQ(t.device(), Device::cpu());
  const Stream s = Stream::create(Device::cpu());
  t.fill(2.5, s);
  EXPECT_EQ(t.to_vector<float>(s)[15], 2.5f);
  EXPECT_EQ(t.storage()->pinned(), testing::gpu_available());
}

TEST(Tensor, DebugStringShowsDeviceDtypeShapeAndValues) {
  const Stream s = Stream::create(Device::cpu());
  Tensor t = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5}, Shape{5}, s);
  EXPECT_EQ(t.debug_string(s, 3), "Tensor(cpu:0, i32, [5]) [1, 2, 3, ... (2 more)]");
  EXPECT_EQ(Tensor().debug_string(s), "Tensor(undefined)");
}

}  // namespace
}  // namespace baton
