// Layout ops on CUDA against the CPU, byte for byte: from 1 to 2.1M elements in several shapes
// (partial tiles, many tiles), grids beyond the y / z limits, poisoned outputs, and round trips.
// Every dtype runs on the small shapes, one dtype of each element size (1, 2, 4 and 8: the kernels'
// cases) on the 140k-element ones, and one dtype on the two beyond a grid limit (70000 images, 2.1M rows):
// they cost a block per tile, and the grid arithmetic they test does not depend on the element size.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/layout.h"
#include "kernels/pool.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::bytes_of;

// The dtypes a shape runs in.
enum class LayoutDTypes { all, one_per_element_size, one };

struct LayoutCase {
  Shape shape;  // read as [N, C, H, W] by nchw_to_nhwc and as [N, H, W, C] by nhwc_to_nchw
  LayoutDTypes dtypes;
};

const LayoutCase kLayoutCases[] = {
    {Shape{1, 1, 1, 1}, LayoutDTypes::all},
    {Shape{1, 7, 1, 1}, LayoutDTypes::all},
    {Shape{1, 1, 1, 7}, LayoutDTypes::all},
    {Shape{3, 11, 31, 1}, LayoutDTypes::all},
    {Shape{1, 3, 11, 31}, LayoutDTypes::all},
    {Shape{2, 35, 6, 7}, LayoutDTypes::all},
    {Shape{5, 67, 419, 1}, LayoutDTypes::one_per_element_size},
    {Shape{1, 5, 67, 419}, LayoutDTypes::one_per_element_size},
    {Shape{70000, 1, 1, 2}, LayoutDTypes::one},  // 70000 images: more than gridDim.z (65535)
    {Shape{1, 2100000, 1, 1},
     LayoutDTypes::one},  // 2.1M rows (C, or H * W when read as NHWC): more than 65535 row tiles
};

constexpr DType kOneDTypePerElementSize[] = {DType::u8, DType::f16, DType::f32, DType::f64};
constexpr DType kOneDType[] = {DType::f32};

std::span<const DType> layout_dtypes(LayoutDTypes dtypes) {
  if (dtypes == LayoutDTypes::one) return kOneDType;
  if (dtypes == LayoutDTypes::one_per_element_size) return kOneDTypePerElementSize;
  return kAllDTypes;
}

Shape nhwc_of(const Shape& nchw) { return Shape{nchw[0], nchw[2], nchw[3], nchw[1]}; }
Shape nchw_of(const Shape& nhwc) { return Shape{nhwc[0], nhwc[3], nhwc[1], nhwc[2]}; }

class LayoutCuda : public testing::CudaOpTest {};

TEST_F(LayoutCuda, MatchesCpuForEveryDtype) {
  uint64_t seed = 1;
  for (const LayoutCase& layout_case : kLayoutCases) {
    const Shape& shape = layout_case.shape;
    for (DType dtype : layout_dtypes(layout_case.dtypes)) {
      SCOPED_TRACE(::testing::Message() << shape.str() << " " << dtype_name(dtype));
      ++seed;
      const double low = dtype == DType::u8 ? 0.0 : -100.0;  // u8 holds no negative values
      Tensor x_c = testing::random_tensor(shape, dtype, cpu.stream(), seed, low, 100.0);
      Tensor x_g = testing::random_tensor(shape, dtype, gs(), seed, low, 100.0);

      // Runs op on both devices into poisoned outputs of out_shape; returns the GPU output.
      auto compare = [&](void (*op)(Context&, const Tensor&, const Tensor&), const Shape& out_shape, const char* what) {
        Tensor out_c = Tensor::empty(out_shape, dtype, cpu), out_g = Tensor::empty(out_shape, dtype, *gpu);
        testing::poison(out_c, cpu.stream());
        testing::poison(out_g, gs());
        op(cpu, x_c, out_c);
        op(*gpu, x_g, out_g);
        EXPECT_EQ(bytes_of(out_g, gs()), bytes_of(out_c, gs())) << what;
        return out_g;
      };
      const Tensor nhwc_g = compare(nchw_to_nhwc, nhwc_of(shape), "nchw_to_nhwc");
      compare(nhwc_to_nchw, nchw_of(shape), "nhwc_to_nchw");

      Tensor back_g = Tensor::empty(shape, dtype, *gpu);
      testing::poison(back_g, gs());
      nhwc_to_nchw(*gpu, nhwc_g, back_g);
      EXPECT_EQ(bytes_of(back_g, gs()), bytes_of(x_c, gs())) << "round trip";
    }
  }
}

TEST_F(LayoutCuda, ToMemoryFormatMatchesCpu) {
  const Shape shape{2, 35, 6, 7};
  const Tensor x_c = testing::random_tensor(shape, DType::f32, cpu.stream(), 9);
  const Tensor x_g = testing::random_tensor(shape, DType::f32, gs(), 9);
  const Tensor last_c = to_memory_format(cpu, x_c, MemoryFormat::channels_last);
  const Tensor last_g = to_memory_format(*gpu, x_g, MemoryFormat::channels_last);
  EXPECT_EQ(last_g.format(), MemoryFormat::channels_last);
  EXPECT_EQ(bytes_of(last_g.nhwc_view(), gs()), bytes_of(last_c.nhwc_view(), cpu.stream()));
  EXPECT_EQ(bytes_of(to_memory_format(*gpu, last_g, MemoryFormat::contiguous), gs()), bytes_of(x_c, cpu.stream()));
}

TEST_F(LayoutCuda, ChannelsLastActivationsAreACpuFormatForConvolutions) {
  const Tensor x = Tensor::empty(Shape{1, 4, 5, 5}, DType::f32, gs(), MemoryFormat::channels_last);
  const Tensor w = Tensor::empty(Shape{4, 4, 3, 3}, DType::f32, gs());
  EXPECT_ERROR_MENTIONS(
      "argument 'x' is a channels-last tensor",
      conv2d_forward(*gpu, x, w, Tensor(), {.padding = {1, 1}}, Tensor::empty(Shape{1, 4, 5, 5}, DType::f32, gs())));
}

TEST_F(LayoutCuda, ChannelsLastActivationsAreACpuFormatForBatchNorm) {
  const Tensor x = Tensor::empty(Shape{2, 4, 5, 5}, DType::f32, gs(), MemoryFormat::channels_last);
  const Tensor c = Tensor::empty(Shape{4}, DType::f32, gs());
  EXPECT_ERROR_MENTIONS(
      "argument 'x' is a channels-last tensor",
      batch_norm_forward_train(*gpu, x, Tensor(), Tensor(), 1e-5, 0.1, Tensor::empty(x.shape(), DType::f32, gs()), c, c,
                               Tensor(), Tensor(), Tensor()));
}

TEST_F(LayoutCuda, ChannelsLastActivationsAreACpuFormatForPooling) {
  const Tensor x = Tensor::empty(Shape{2, 4, 6, 6}, DType::f32, gs(), MemoryFormat::channels_last);
  const Pool2dGeometry g{.kernel = {2, 2}, .stride = {2, 2}};
  const Shape out{2, 4, 3, 3};
  EXPECT_ERROR_MENTIONS(
      "argument 'x' is a channels-last tensor",
      max_pool2d_forward(*gpu, x, g, Tensor::empty(out, DType::f32, gs(), MemoryFormat::channels_last),
                         Tensor::empty(out, DType::i32, gs(), MemoryFormat::channels_last)));
  EXPECT_ERROR_MENTIONS("argument 'x' is a channels-last tensor",
                        global_avg_pool2d_forward(*gpu, x, Tensor::empty(Shape{2, 4, 1, 1}, DType::f32, gs())));
}

}  // namespace
}  // namespace baton::kernels
