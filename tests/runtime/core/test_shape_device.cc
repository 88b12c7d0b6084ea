// Shape arithmetic and errors; Device parsing, names and range checks.
#include <gtest/gtest.h>

#include "runtime/core/device.h"
#include "runtime/core/error.h"
#include "runtime/core/shape.h"

namespace baton {
namespace {

TEST(Shape, NumelStridesAndNames) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.stride(0), 12);
  EXPECT_EQ(s.stride(-1), 1);
  EXPECT_EQ(s[-1], 4);
  EXPECT_EQ(s.str(), "[2, 3, 4]");
  EXPECT_EQ(Shape().numel(), 1);
  EXPECT_EQ(s.with_dim0(5), (Shape{5, 3, 4}));
}

TEST(Shape, BadAxisAndNegativeDimensionAreErrors) {
  const Shape s{2, 3};
  EXPECT_THROW(s[2], Error);
  EXPECT_THROW(s[-3], Error);
  EXPECT_THROW(Shape({2, -1}), Error);
  EXPECT_THROW(Shape().with_dim0(1), Error);
}

TEST(Device, ParsesTheAcceptedForms) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu(0));
  EXPECT_EQ(Device::parse("cpu:3"), Device::cpu(3));
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:1"), Device::cuda(1));
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  EXPECT_EQ(Device::parse(Device::cpu(7).str()), Device::cpu(7));
}

TEST(Device, UnknownNamesAreErrorsNamingTheForms) {
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "cpu:1x", "", "CUDA:0", "cuda:0:1"}) {
    try {
      Device::parse(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("expected cpu, cpu:N, cuda or cuda:N"), std::string::npos) << e.what();
    }
  }
}

TEST(Device, OutOfRangeCudaIndexIsAnError) {
  const int count = cuda_device_count();
  try {
    check_device(Device::cuda(count + 5));
    FAIL() << "cuda:" << count + 5 << " accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:" + std::to_string(count + 5)), std::string::npos);
  }
  EXPECT_NO_THROW(check_device(Device::cpu(4)));
}

}  // namespace
}  // namespace baton
