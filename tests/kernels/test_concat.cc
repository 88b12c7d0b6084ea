// Channel concatenation ops on the CPU against a reference that indexes every element here: ranks 2
// to 4, every dtype, channel counts that make rows of odd byte lengths, split as the exact inverse,
// slices, views as outputs, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/concat.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

// Dimension 1 of `shape` replaced by `channels`.
Shape with_channels(const Shape& shape, int64_t channels) {
  std::vector<int64_t> dims = shape.dims();
  dims[1] = channels;
  return Shape(std::move(dims));
}

// out[n, c, rest] = inputs[i][n, c - offset_i, rest] for the input i whose channels hold c.
std::vector<double> naive_concat(const std::vector<std::vector<double>>& inputs, const std::vector<int64_t>& channels,
                                 int64_t batch, int64_t inner) {
  int64_t total = 0;
  for (int64_t c : channels) total += c;
  std::vector<double> out(static_cast<size_t>(batch * total * inner));
  for (int64_t n = 0; n < batch; ++n) {
    int64_t offset = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (int64_t c = 0; c < channels[i]; ++c) {
        for (int64_t k = 0; k < inner; ++k) {
          out[static_cast<size_t>((n * total + offset + c) * inner + k)] =
              inputs[i][static_cast<size_t>((n * channels[i] + c) * inner + k)];
        }
      }
      offset += channels[i];
    }
  }
  return out;
}

struct ConcatCase {
  Shape shape;  // of the output, with any channel count in dimension 1
  std::vector<int64_t> channels;
};

const ConcatCase kConcatCases[] = {
    {Shape{3, 0}, {2, 5}},           // rank 2: [N, C]
    {Shape{1, 0}, {1, 1, 1}},        // one row, one channel each
    {Shape{2, 0, 7}, {3, 1, 4}},     // rank 3, odd inner size
    {Shape{4, 0, 5, 5}, {3, 6, 1}},  // NCHW
    {Shape{2, 0, 8, 8}, {16, 32}},   // rows of whole 16-byte vectors
    {Shape{0, 0, 3}, {2, 2}},        // empty batch
};

class ConcatCpu : public ::testing::Test {
 protected:
  Tensor poisoned(const Shape& shape, DType dtype) {
    Tensor t = Tensor::empty(shape, dtype, ctx);
    testing::poison(t, ctx.stream());
    return t;
  }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }

  Context ctx{Device::cpu()};
};

TEST_F(ConcatCpu, ConcatSplitAndSliceMatchTheReference) {
  for (DType dtype : kAllDTypes) {
    for (const ConcatCase& c : kConcatCases) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " " << c.shape.str() << " channels "
                                        << ::testing::PrintToString(c.channels));
      const int64_t batch = c.shape[0], inner = c.shape.stride(1);
      std::vector<Tensor> inputs;
      std::vector<std::vector<double>> input_values;
      int64_t total = 0;
      for (size_t i = 0; i < c.channels.size(); ++i) {
        inputs.push_back(testing::random_tensor(with_channels(c.shape, c.channels[i]), dtype, ctx.stream(), 30 + i,
                                                dtype == DType::u8 ? 0.0 : -100.0, 100.0));
        input_values.push_back(values(inputs.back()));
        total += c.channels[i];
      }
      const Tensor out = poisoned(with_channels(c.shape, total), dtype);
      concat_channels(ctx, inputs, out);
      EXPECT_TRUE(testing::identical_values(values(out), naive_concat(input_values, c.channels, batch, inner)));

      std::vector<Tensor> parts;
      for (const Tensor& in : inputs) parts.push_back(poisoned(in.shape(), dtype));
      split_channels(ctx, out, parts);
      int64_t begin = 0;
      for (size_t i = 0; i < parts.size(); ++i) {
        EXPECT_TRUE(testing::identical_values(values(parts[i]), input_values[i])) << "split part " << i;
        const Tensor slice = poisoned(inputs[i].shape(), dtype);
        slice_channels(ctx, out, begin, slice);
        EXPECT_TRUE(testing::identical_values(values(slice), input_values[i])) << "slice " << i;
        begin += c.channels[i];
      }
    }
  }
}

TEST_F(ConcatCpu, WritesIntoAViewAndNothingElse) {
  const Tensor a = testing::random_tensor(Shape{2, 3, 4}, DType::f32, ctx.stream(), 40);
  const Tensor b = testing::random_tensor(Shape{2, 1, 4}, DType::f32, ctx.stream(), 41);
  const Tensor big = poisoned(Shape{4, 4, 4}, DType::f32);
  const std::vector<Tensor> inputs = {a, b};
  concat_channels(ctx, inputs, big.slice(1, 3));
  const std::vector<double> got = values(big);
  const std::vector<double> expected = naive_concat({values(a), values(b)}, {3, 1}, 2, 4);
  EXPECT_TRUE(testing::identical_values(std::vector<double>(got.begin() + 16, got.begin() + 48), expected));
  for (size_t i : {size_t{0}, size_t{15}, size_t{48}, size_t{63}}) EXPECT_TRUE(std::isnan(got[i])) << i;
}

TEST_F(ConcatCpu, ArgumentErrorsNameTheProblem) {
  const Tensor a = poisoned(Shape{2, 3, 4}, DType::f32), b = poisoned(Shape{2, 1, 4}, DType::f32);
  const Tensor out = poisoned(Shape{2, 4, 4}, DType::f32);
  auto concat = [&](std::vector<Tensor> inputs, const Tensor& o) { concat_channels(ctx, inputs, o); };
  EXPECT_ERROR_MENTIONS("argument 'inputs[1]' has shape [2, 1, 5], expected [2, *, 4]",
                        concat({a, poisoned(Shape{2, 1, 5}, DType::f32)}, out));
  EXPECT_ERROR_MENTIONS("argument 'inputs[1]' has shape [3, 1, 4], expected [2, *, 4]",
                        concat({a, poisoned(Shape{3, 1, 4}, DType::f32)}, out));
  EXPECT_ERROR_MENTIONS("argument 'inputs[0]' has shape [2, 3], expected [2, *, 4]",
                        concat({poisoned(Shape{2, 3}, DType::f32), b}, out));
  EXPECT_ERROR_MENTIONS("argument 'inputs[1]' has dtype f64, expected f32",
                        concat({a, poisoned(Shape{2, 1, 4}, DType::f64)}, out));
  EXPECT_ERROR_MENTIONS("the inputs have 4 channels (dimension 1) in all, expected 5",
                        concat({a, b}, poisoned(Shape{2, 5, 4}, DType::f32)));
  EXPECT_ERROR_MENTIONS("argument 'out' has shape [8], expected at least 2 dimensions",
                        concat({a, b}, poisoned(Shape{8}, DType::f32)));
  EXPECT_ERROR_MENTIONS("argument 'inputs' is empty", concat({}, out));
  EXPECT_ERROR_MENTIONS("argument 'inputs[1]' is an undefined tensor", concat({a, Tensor()}, out));
  const Tensor storage = poisoned(Shape{3, 4, 4}, DType::f32);
  EXPECT_ERROR_MENTIONS("argument 'out' overlaps argument 'inputs[0]'",
                        concat({storage.slice(1, 3), b}, storage.slice(0, 2)));

  const std::vector<Tensor> wrong = {poisoned(Shape{2, 3, 4}, DType::f32), poisoned(Shape{2, 2, 4}, DType::f32)};
  EXPECT_ERROR_MENTIONS("the outputs have 5 channels (dimension 1) in all, expected 4",
                        split_channels(ctx, out, wrong));
  EXPECT_ERROR_MENTIONS("channels [2, 5) of argument 'x'", slice_channels(ctx, out, 2, a));
  EXPECT_ERROR_MENTIONS("argument 'begin' is -1", slice_channels(ctx, out, -1, b));
}

}  // namespace
}  // namespace baton::kernels
