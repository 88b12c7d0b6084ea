// Tensors in channels-last memory format: what keeps the format, what refuses it, and the views.
#include <gtest/gtest.h>

#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

TEST(MemoryFormat, ChannelsLastNeedsARank4Shape) {
  const Stream s = Stream::create(Device::cpu());
  EXPECT_EQ(Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, s).format(), MemoryFormat::contiguous);
  EXPECT_EQ(Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, s, MemoryFormat::channels_last).format(),
            MemoryFormat::channels_last);
  EXPECT_ERROR_MENTIONS("needs a rank-4 [N, C, H, W] shape, got [2, 3]",
                        Tensor::empty(Shape{2, 3}, DType::f32, s, MemoryFormat::channels_last));
}

TEST(MemoryFormat, PlacementIsTheSameOnlyWhereNoElementMoves) {
  EXPECT_TRUE(same_placement(Shape{2, 3, 4, 5}, MemoryFormat::channels_last, MemoryFormat::channels_last));
  EXPECT_FALSE(same_placement(Shape{2, 3, 4, 5}, MemoryFormat::channels_last, MemoryFormat::contiguous));
  EXPECT_TRUE(same_placement(Shape{2, 64, 1, 1}, MemoryFormat::channels_last, MemoryFormat::contiguous));
  EXPECT_TRUE(same_placement(Shape{2, 1, 4, 5}, MemoryFormat::contiguous, MemoryFormat::channels_last));
}

TEST(MemoryFormat, MicroBatchSlicesKeepTheFormatAndTheBytes) {
  const Stream s = Stream::create(Device::cpu());
  const Tensor x = Tensor::empty(Shape{4, 3, 2, 2}, DType::f32, s, MemoryFormat::channels_last);
  const Tensor rows = x.slice(1, 3);
  EXPECT_EQ(rows.format(), MemoryFormat::channels_last);
  EXPECT_EQ(rows.shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(static_cast<char*>(rows.data_ptr()) - static_cast<char*>(x.data_ptr()), 12 * 4);
  for (const Tensor& part : x.split(3)) EXPECT_EQ(part.format(), MemoryFormat::channels_last);
}

TEST(MemoryFormat, NhwcViewsShareTheBytes) {
  const Stream s = Stream::create(Device::cpu());
  const Tensor x = Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, s, MemoryFormat::channels_last);
  const Tensor nhwc = x.nhwc_view();
  EXPECT_EQ(nhwc.shape(), (Shape{2, 4, 5, 3}));
  EXPECT_EQ(nhwc.format(), MemoryFormat::contiguous);
  EXPECT_EQ(nhwc.data_ptr(), x.data_ptr());
  const Tensor back = Tensor::channels_last_from_nhwc(nhwc);
  EXPECT_EQ(back.shape(), x.shape());
  EXPECT_EQ(back.format(), MemoryFormat::channels_last);
  EXPECT_EQ(back.data_ptr(), x.data_ptr());
  EXPECT_ERROR_MENTIONS("not channels-last", (void)nhwc.nhwc_view());
  EXPECT_ERROR_MENTIONS("expected a contiguous [N, H, W, C]", (void)Tensor::channels_last_from_nhwc(x));
}

TEST(MemoryFormat, WhatReadsRowMajorOrderRefusesChannelsLast) {
  const Stream s = Stream::create(Device::cpu());
  const Tensor x = Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, s, MemoryFormat::channels_last);
  const Tensor plain = Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, s);
  EXPECT_ERROR_MENTIONS("convert it with kernels::to_memory_format first", (void)x.to_vector<float>(s));
  EXPECT_ERROR_MENTIONS("not in row-major order", (void)x.reshape(Shape{2, 60}));
  EXPECT_ERROR_MENTIONS("does not place its elements", plain.as_format(MemoryFormat::channels_last));
  Tensor copy = plain;
  EXPECT_ERROR_MENTIONS("a channels-last source into a contiguous destination", copy.copy_from(x, s));
  // Where no element moves ([N, C, 1, 1]) the formats are interchangeable.
  const Tensor pooled = Tensor::empty(Shape{2, 3, 1, 1}, DType::f32, s, MemoryFormat::channels_last);
  EXPECT_EQ(pooled.reshape(Shape{2, 3}).shape(), (Shape{2, 3}));
  EXPECT_EQ(pooled.as_format(MemoryFormat::contiguous).data_ptr(), pooled.data_ptr());
  Tensor same = x.to(Device::cpu(), s);
  EXPECT_EQ(same.format(), MemoryFormat::channels_last);
  same.copy_from(x, s);
}

}  // namespace
}  // namespace baton
