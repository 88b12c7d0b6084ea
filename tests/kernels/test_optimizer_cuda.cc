// Optimizer ops on CUDA against the CPU reference over several steps: 1, 7, 1023 and 2^20 + 3
// elements, f32 and f64, every buffer 16-byte aligned (vector path), every buffer unaligned and
// only the gradient unaligned (scalar path), a poisoned momentum buffer on the first SGD step.
// The small sizes run every (dtype, alignment, configuration) combination, vector paths with their scalar
// tails included; 2^20 + 3 elements (many blocks) run every (dtype, alignment) pair once, each with the next
// configuration in turn: the size tests the grid arithmetic, the configuration only the per-element formula.
#include <gtest/gtest.h>

#include <iterator>
#include <vector>

#include "kernels/optimizer.h"
#include "runtime/core/enum_table.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

constexpr int64_t kOptimizerLargeSize = (int64_t{1} << 20) + 3;
constexpr int64_t kOptimizerSizes[] = {1, 7, 1023, kOptimizerLargeSize};
constexpr int kSteps = 3;

enum class Alignment { all_aligned, all_unaligned, grads_unaligned };
constexpr Alignment kAlignments[] = {Alignment::all_aligned, Alignment::all_unaligned, Alignment::grads_unaligned};
const char* alignment_name(Alignment a) {
  constexpr const char* kNames[] = {"all aligned", "all unaligned", "grads unaligned"};
  return enum_lookup<Alignment::grads_unaligned>(a, kNames, "?");
}

// Element arithmetic is the same formula on both devices; CUDA may fuse a multiply and an add.
double tolerance(DType dtype) { return dtype == DType::f64 ? 1e-12 : 1e-5; }

// A buffer on ctx's device holding the values of random_tensor(seed, low, high), starting one element
// past a 16-byte boundary when `unaligned`.
Tensor buffer(Context& ctx, int64_t n, DType dtype, bool unaligned, uint64_t seed, double low = -1.0,
              double high = 1.0) {
  Tensor values = testing::random_tensor(Shape{n}, dtype, ctx.stream(), seed, low, high);
  return unaligned ? testing::copy_to(values, ctx.stream(), true) : values;
}

// Whether a test runs configuration `config` of `configs` at size n for one (dtype, alignment) pair, the
// `pair`-th: every configuration at the small sizes, the next one in turn at the large size.
bool optimizer_runs(int64_t n, size_t pair, size_t config, size_t configs) {
  return n != kOptimizerLargeSize || pair % configs == config;
}

// The same buffers on one device.
struct SgdBuffers {
  Tensor params, momentum_buf;
};
struct AdamWBuffers {
  Tensor params, exp_avg, exp_avg_sq;
};

class OptimizerCuda : public testing::CudaOpTest {};

TEST_F(OptimizerCuda, SgdMatchesCpu) {
  const SgdParams configs[] = {
      {.lr = 0.1},
      {.lr = 0.05, .momentum = 0.9, .dampening = 0.2, .weight_decay = 0.01},
      {.lr = 0.05, .momentum = 0.9, .nesterov = true, .weight_decay = 0.1, .decoupled_weight_decay = true},
  };
  for (int64_t n : kOptimizerSizes) {
    size_t pair = 0;
    for (DType dtype : {DType::f32, DType::f64}) {
      for (Alignment alignment : kAlignments) {
        ++pair;
        for (size_t config_index = 0; config_index < std::size(configs); ++config_index) {
          if (!optimizer_runs(n, pair, config_index, std::size(configs))) continue;
          const SgdParams& config = configs[config_index];
          SCOPED_TRACE(::testing::Message() << "n " << n << " " << dtype_name(dtype) << " " << alignment_name(alignment)
                                            << " momentum " << config.momentum << " nesterov " << config.nesterov);
          const bool state_unaligned = alignment == Alignment::all_unaligned;
          const bool has_momentum = config.momentum != 0;
          SgdBuffers c{buffer(cpu, n, dtype, false, 1), Tensor()};
          SgdBuffers g{buffer(*gpu, n, dtype, state_unaligned, 1), Tensor()};
          if (has_momentum) {
            c.momentum_buf = buffer(cpu, n, dtype, false, 2);
            g.momentum_buf = buffer(*gpu, n, dtype, state_unaligned, 2);
            testing::poison(c.momentum_buf, cpu.stream());  // the first step must not read it
            testing::poison(g.momentum_buf, gs());
          }
          for (int step = 0; step < kSteps; ++step) {
            SgdParams p = config;
            p.first_step = step == 0;
            const uint64_t grad_seed = 10 + static_cast<uint64_t>(step);
            sgd_step(cpu, c.params, buffer(cpu, n, dtype, false, grad_seed), c.momentum_buf, p);
            sgd_step(*gpu, g.params, buffer(*gpu, n, dtype, alignment != Alignment::all_aligned, grad_seed),
                     g.momentum_buf, p);
          }
          const double tol = tolerance(dtype);
          EXPECT_TRUE(testing::tensors_close(g.params, c.params, gs(), tol, tol));
          if (has_momentum) {
            EXPECT_TRUE(testing::tensors_close(g.momentum_buf, c.momentum_buf, gs(), tol, tol));
          }
        }
      }
    }
  }
}

TEST_F(OptimizerCuda, AdamWMatchesCpu) {
  const AdamWParams configs[] = {
      {.lr = 1e-3, .step = 1},
      {.lr = 3e-2, .beta1 = 0.5, .beta2 = 0.99, .eps = 1e-3, .weight_decay = 0.1, .step = 1},
  };
  for (int64_t n : kOptimizerSizes) {
    size_t pair = 0;
    for (DType dtype : {DType::f32, DType::f64}) {
      for (Alignment alignment : kAlignments) {
        ++pair;
        for (size_t config_index = 0; config_index < std::size(configs); ++config_index) {
          if (!optimizer_runs(n, pair, config_index, std::size(configs))) continue;
          const AdamWParams& config = configs[config_index];
          SCOPED_TRACE(::testing::Message() << "n " << n << " " << dtype_name(dtype) << " " << alignment_name(alignment)
                                            << " lr " << config.lr);
          const bool state_unaligned = alignment == Alignment::all_unaligned;
          // exp_avg starts at zero in training; any values test the formula as well, and exp_avg_sq >= 0.
          AdamWBuffers c{buffer(cpu, n, dtype, false, 1), buffer(cpu, n, dtype, false, 2),
                         buffer(cpu, n, dtype, false, 3, 0.0, 1.0)};
          AdamWBuffers g{buffer(*gpu, n, dtype, state_unaligned, 1), buffer(*gpu, n, dtype, state_unaligned, 2),
                         buffer(*gpu, n, dtype, state_unaligned, 3, 0.0, 1.0)};
          for (int step = 1; step <= kSteps; ++step) {
            AdamWParams p = config;
            p.step = step;
            const uint64_t grad_seed = 20 + static_cast<uint64_t>(step);
            adamw_step(cpu, c.params, buffer(cpu, n, dtype, false, grad_seed), c.exp_avg, c.exp_avg_sq, p);
            adamw_step(*gpu, g.params, buffer(*gpu, n, dtype, alignment != Alignment::all_aligned, grad_seed),
                       g.exp_avg, g.exp_avg_sq, p);
          }
          const double tol = tolerance(dtype);
          EXPECT_TRUE(testing::tensors_close(g.params, c.params, gs(), tol, tol));
          EXPECT_TRUE(testing::tensors_close(g.exp_avg, c.exp_avg, gs(), tol, tol));
          EXPECT_TRUE(testing::tensors_close(g.exp_avg_sq, c.exp_avg_sq, gs(), tol, tol));
        }
      }
    }
  }
}

TEST_F(OptimizerCuda, RejectsBadInputOnTheDevice) {
  Tensor params = buffer(*gpu, 8, DType::f32, false, 1);
  Tensor grads = buffer(*gpu, 8, DType::f32, false, 2);
  EXPECT_ERROR_MENTIONS("'grads'", sgd_step(*gpu, params, buffer(cpu, 8, DType::f32, false, 2), Tensor(), {.lr = 1}));
  EXPECT_ERROR_MENTIONS("'momentum_buf'", sgd_step(*gpu, params, grads, Tensor(), {.lr = 1, .momentum = 0.5}));
}

}  // namespace
}  // namespace baton::kernels
