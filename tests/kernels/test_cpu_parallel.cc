// The CPU kernels that run on several threads: on tensors large enough to be split into many
// ranges, every result is the same bits whatever the thread count (1, 2, 3), and the split loops
// still compute what the reference does.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/bias.h"
#include "kernels/elementwise.h"
#include "kernels/loss.h"
#include "kernels/optimizer.h"
#include "kernels/pool.h"
#include "kernels/reduce.h"
#include "runtime/core/cpu_threads.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

// [8, 16, 48, 48]: 294,912 elements, 9 ranges of elementwise work, 2 channels a BatchNorm range.
const Shape kShape{8, 16, 48, 48};

class CpuParallel : public ::testing::Test {
 protected:
  Tensor random(const Shape& shape, uint64_t seed, double low = -1.0, double high = 1.0) {
    return testing::random_tensor(shape, DType::f32, ctx.stream(), seed, low, high);
  }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }

  // The values of every tensor `run` returns, computed under 1, 2 and 3 threads: all the same bits.
  void expect_same_bits_for_any_thread_count(const std::string& op, const std::function<std::vector<Tensor>()>& run) {
    std::vector<std::vector<double>> serial;
    {
      const CpuThreadsScope scope(1);
      for (const Tensor& t : run()) serial.push_back(values(t));
    }
    for (const int threads : {2, 3}) {
      const CpuThreadsScope scope(threads);
      const std::vector<Tensor> results = run();
      ASSERT_EQ(results.size(), serial.size());
      for (size_t i = 0; i < results.size(); ++i) {
        EXPECT_TRUE(testing::identical_values(values(results[i]), serial[i]))
            << op << ", result " << i << ", " << threads << " threads";
      }
    }
  }

  Context ctx{Device::cpu()};
};

TEST_F(CpuParallel, ElementwiseOpsSplitIntoRangesMatchTheReferenceAndAnyThreadCount) {
  const Tensor a = random(kShape, 1), b = random(kShape, 2);
  const Tensor sum = Tensor::empty(kShape, DType::f32, ctx);
  {
    const CpuThreadsScope scope(3);
    add(ctx, a, b, sum);
  }
  const std::vector<double> av = values(a), bv = values(b), got = values(sum);
  std::vector<double> expected(av.size());
  for (size_t i = 0; i < av.size(); ++i) expected[i] = static_cast<float>(av[i] + bv[i]);
  EXPECT_TRUE(testing::identical_values(got, expected));

  expect_same_bits_for_any_thread_count("add, relu, relu_backward, axpby", [&] {
    const Tensor out = Tensor::empty(kShape, DType::f32, ctx), y = Tensor::empty(kShape, DType::f32, ctx);
    const Tensor dx = Tensor::empty(kShape, DType::f32, ctx), mix = Tensor::empty(kShape, DType::f32, ctx);
    add(ctx, a, b, out);
    relu_forward(ctx, out, y);
    relu_backward(ctx, y, b, dx);
    axpby(ctx, 0.3, a, -1.7, b, mix);
    return std::vector<Tensor>{out, y, dx, mix};
  });
}

TEST_F(CpuParallel, BatchNormAndBiasGiveTheSameBitsForAnyThreadCount) {
  const Tensor x = random(kShape, 3), dy = random(kShape, 4);
  const Tensor weight = random(Shape{16}, 5), bias = random(Shape{16}, 6);
  expect_same_bits_for_any_thread_count("batch norm", [&] {
    const Tensor y = Tensor::empty(kShape, DType::f32, ctx), dx = Tensor::empty(kShape, DType::f32, ctx);
    const Tensor mean = Tensor::empty(Shape{16}, DType::f32, ctx), invstd = Tensor::empty(Shape{16}, DType::f32, ctx);
    const Tensor running_mean = random(Shape{16}, 7), running_var = random(Shape{16}, 8, 0.5, 1.5);
    const Tensor weight_grad = random(Shape{16}, 9), bias_grad = random(Shape{16}, 10);
    batch_norm_forward_train(ctx, x, weight, bias, 1e-5, 0.1, y, mean, invstd, running_mean, running_var, Tensor());
    batch_norm_backward_train(ctx, x, dy, weight, mean, invstd, 1e-5, dx, weight_grad, bias_grad);
    const Tensor biased = random(kShape, 11);
    bias_add(ctx, bias, biased);
    return std::vector<Tensor>{y, mean, invstd, running_mean, running_var, dx, weight_grad, bias_grad, biased};
  });
}

TEST_F(CpuParallel, PoolingGivesTheSameBitsForAnyThreadCount) {
  const Tensor x = random(kShape, 15);
  const Pool2dGeometry window{.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}};
  const Shape pooled = pool2d_output_shape("test", kShape, window);
  const Tensor dy = random(pooled, 16), dy_global = random(Shape{8, 16, 1, 1}, 17);
  expect_same_bits_for_any_thread_count("pooling", [&] {
    const Tensor y = Tensor::empty(pooled, DType::f32, ctx), indices = Tensor::empty(pooled, DType::i64, ctx);
    const Tensor dx = Tensor::empty(kShape, DType::f32, ctx), average = Tensor::empty(pooled, DType::f32, ctx);
    const Tensor global = Tensor::empty(Shape{8, 16, 1, 1}, DType::f32, ctx);
    const Tensor global_dx = Tensor::empty(kShape, DType::f32, ctx);
    max_pool2d_forward(ctx, x, window, y, indices);
    max_pool2d_backward(ctx, dy, indices, window, dx);
    avg_pool2d_forward(ctx, x, window, true, average);
    global_avg_pool2d_forward(ctx, x, global);
    global_avg_pool2d_backward(ctx, dy_global, global_dx);
    return std::vector<Tensor>{y, indices, dx, average, global, global_dx};
  });
}

TEST_F(CpuParallel, TheOptimizerStepGivesTheSameBitsForAnyThreadCount) {
  const Tensor grads = random(Shape{kShape.numel()}, 12);
  expect_same_bits_for_any_thread_count("sgd", [&] {
    const Tensor params = random(Shape{kShape.numel()}, 13), momentum = random(Shape{kShape.numel()}, 14);
    sgd_step(ctx, params, grads, momentum, {.lr = 0.1, .momentum = 0.9, .weight_decay = 5e-4});
    return std::vector<Tensor>{params, momentum};
  });
  expect_same_bits_for_any_thread_count("adamw", [&] {
    const Tensor params = random(Shape{kShape.numel()}, 13), exp_avg = random(Shape{kShape.numel()}, 14);
    const Tensor exp_avg_sq = random(Shape{kShape.numel()}, 15, 0.0, 1.0);
    adamw_step(ctx, params, grads, exp_avg, exp_avg_sq, {.lr = 0.01, .step = 3});
    return std::vector<Tensor>{params, exp_avg, exp_avg_sq};
  });
}

TEST_F(CpuParallel, ReductionsSplitIntoRangesMatchTheReferenceAndAnyThreadCount) {
  const Tensor x = random(kShape, 18), y = random(kShape, 19);
  const Tensor total = Tensor::empty(Shape{}, DType::f32, ctx);
  {
    const CpuThreadsScope scope(3);
    sum(ctx, x, total);
  }
  double expected = 0.0;
  for (const double v : values(x)) expected += v;
  EXPECT_NEAR(values(total)[0], expected, 1e-6 * std::abs(expected) + 1e-6);

  expect_same_bits_for_any_thread_count("sum, mean, max, sum_squares, l2_norm, channel_sum, channel_dot", [&] {
    std::vector<Tensor> out;
    for (void (*op)(Context&, const Tensor&, const Tensor&) : {&sum, &mean, &max, &sum_squares, &l2_norm}) {
      out.push_back(Tensor::empty(Shape{}, DType::f32, ctx));
      op(ctx, x, out.back());
    }
    out.push_back(Tensor::empty(Shape{16}, DType::f32, ctx));
    channel_sum(ctx, x, out.back());
    out.push_back(Tensor::empty(Shape{16}, DType::f32, ctx));
    channel_dot(ctx, x, y, out.back());
    return out;
  });
}

TEST_F(CpuParallel, LossAndCastsGiveTheSameBitsForAnyThreadCount) {
  const Shape logits_shape{3000, 100};  // 300,000 elements, rows in 28 ranges
  const Tensor logits = random(logits_shape, 20, -4.0, 4.0);
  std::vector<double> label_values(3000);
  for (size_t r = 0; r < label_values.size(); ++r) label_values[r] = static_cast<double>(r * 37 % 100);
  const Tensor int_labels = testing::from_doubles(label_values, Shape{3000}, DType::i64, ctx.stream());
  const Tensor x = random(kShape, 23, -1e3, 1e3);
  expect_same_bits_for_any_thread_count("softmax cross-entropy, top-k, casts", [&] {
    const Tensor loss = Tensor::empty(Shape{}, DType::f32, ctx), probs = Tensor::empty(logits_shape, DType::f32, ctx);
    const Tensor dlogits = Tensor::empty(logits_shape, DType::f32, ctx),
                 correct = Tensor::empty(Shape{}, DType::i64, ctx);
    softmax_cross_entropy_forward(ctx, logits, int_labels, 0.1, loss, probs);
    softmax_cross_entropy_backward(ctx, probs, int_labels, 0.1, 1.0, dlogits);
    topk_correct(ctx, logits, int_labels, 5, correct);
    const Tensor bf16 = Tensor::empty(kShape, DType::bf16, ctx), f16 = Tensor::empty(kShape, DType::f16, ctx);
    cast(ctx, x, bf16);
    cast(ctx, x, f16);
    return std::vector<Tensor>{loss, probs, dlogits, correct, bf16, f16};
  });
}

}  // namespace
}  // namespace baton::kernels
