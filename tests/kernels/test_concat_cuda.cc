// Channel concatenation ops on CUDA against the CPU, bit for bit: every dtype, shapes whose rows take
// each copy unit (16, 8, 4, 2 and 1 bytes), tensors that start off alignment, a large tensor, split
// and slice. Skipped without a GPU. The small shapes run in every dtype and take every copy unit; the
// large tensor (10 MiB of f32: many blocks) runs in f32 only, aligned and not: the copy units are chosen
// from the row bytes and alignment, which the small shapes cover for every element size.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/concat.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;

Shape with_channels(const Shape& shape, int64_t channels) {
  std::vector<int64_t> dims = shape.dims();
  dims[1] = channels;
  return Shape(std::move(dims));
}

struct ConcatCudaCase {
  Shape shape;  // with any channel count in dimension 1
  std::vector<int64_t> channels;
  bool f32_only = false;  // a large case: one dtype
};

const ConcatCudaCase kConcatCudaCases[] = {
    {Shape{4, 0, 8, 8}, {16, 32, 8}},        // 16-byte units for 4-byte elements
    {Shape{3, 0, 2}, {1, 3}},                // 8-byte rows of f32
    {Shape{5, 0}, {1, 2, 3}},                // one element per channel
    {Shape{2, 0, 3, 3}, {7, 1}},             // odd lengths: 1- or 2-byte units for small dtypes
    {Shape{64, 0, 32, 32}, {64, 96}, true},  // 10 MiB of f32: many blocks
};

class ConcatCuda : public testing::CudaOpTest {};

TEST_F(ConcatCuda, SameBytesAsTheCpu) {
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::u8, DType::i64}) {
    for (const ConcatCudaCase& c : kConcatCudaCases) {
      if (c.f32_only && dtype != DType::f32) continue;
      for (bool offset : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " " << c.shape.str() << " channels "
                                          << ::testing::PrintToString(c.channels) << (offset ? ", off alignment" : ""));
        std::vector<Tensor> inputs, gpu_inputs;
        int64_t total = 0;
        for (size_t i = 0; i < c.channels.size(); ++i) {
          inputs.push_back(
              testing::random_tensor(with_channels(c.shape, c.channels[i]), dtype, cpu.stream(), 70 + i, 0.0, 100.0));
          gpu_inputs.push_back(copy_to(inputs.back(), gs(), offset && i == 0));
          total += c.channels[i];
        }
        const Shape out_shape = with_channels(c.shape, total);
        const Tensor expected = Tensor::empty(out_shape, dtype, cpu);
        concat_channels(cpu, inputs, expected);
        const Tensor out = testing::poisoned(out_shape, dtype, gs(), offset);
        concat_channels(*gpu, gpu_inputs, out);
        EXPECT_EQ(testing::bytes_of(out, gs()), testing::bytes_of(expected, cpu.stream())) << "concat";

        std::vector<Tensor> parts;
        for (const Tensor& in : inputs) parts.push_back(testing::poisoned(in.shape(), dtype, gs(), !offset));
        split_channels(*gpu, out, parts);
        for (size_t i = 0; i < parts.size(); ++i) {
          EXPECT_EQ(testing::bytes_of(parts[i], gs()), testing::bytes_of(inputs[i], cpu.stream())) << "split " << i;
        }
        const Tensor slice = testing::poisoned(inputs.back().shape(), dtype, gs(), offset);
        slice_channels(*gpu, out, total - c.channels.back(), slice);
        EXPECT_EQ(testing::bytes_of(slice, gs()), testing::bytes_of(inputs.back(), cpu.stream())) << "slice";
      }
    }
  }
}

}  // namespace
}  // namespace baton::kernels
