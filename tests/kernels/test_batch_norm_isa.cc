// The batch-norm loops cloned per instruction set (kernels/cpu/batch_norm_isa.h): the clone this
// processor runs gives the same bits as the same templates compiled here for baseline x86-64, on
// channels whose lengths leave every remainder of the 8 lanes.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/batch_norm_isa.h"
#include "kernels/cpu_engine.h"
#include "tests/support/test_support.h"

namespace baton::kernels::cpu {
namespace {

template <typename T>
std::vector<T> ramp(size_t n, double scale) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(scale * static_cast<double>((i * 7919) % 1009) / 1009.0 - 0.3);
  return v;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename T>
void expect_clone_equals_baseline() {
  for (const int64_t hw : {1, 7, 8, 9, 61, 196}) {
    const ChannelOf at{3, 5, hw, 2};
    const size_t n = static_cast<size_t>(at.batch * at.channels * hw);
    const std::vector<T> x = ramp<T>(n, 3.0), dy = ramp<T>(n, -1.5);
    SCOPED_TRACE(::testing::Message() << "hw " << hw << ", " << sizeof(T) << "-byte elements");
    EXPECT_EQ(isa::channel_mean_var(x.data(), at), channel_mean_var_body(x.data(), at));
    EXPECT_EQ(isa::backward_sums(x.data(), dy.data(), at, 0.4, 1.7),
              backward_sums_body(x.data(), dy.data(), at, 0.4, 1.7));
    std::vector<T> y_isa(n), y_base(n), dx_isa(n), dx_base(n);
    isa::normalize_channel(x.data(), at, 0.4, 1.7, -0.2, y_isa.data());
    normalize_channel_body(x.data(), at, 0.4, 1.7, -0.2, y_base.data());
    EXPECT_TRUE(same_bits(y_isa, y_base));
    isa::backward_dx(x.data(), dy.data(), at, 0.4, 1.7, 0.9, 0.01, -0.03, dx_isa.data());
    backward_dx_body(x.data(), dy.data(), at, 0.4, 1.7, 0.9, 0.01, -0.03, dx_base.data());
    EXPECT_TRUE(same_bits(dx_isa, dx_base));
  }
}

TEST(BatchNormIsa, TheCloneThisProcessorRunsGivesTheBaselineBits) {
  std::printf("batch norm loops run with %s\n", cpu_engine_info().loops_isa.c_str());
  expect_clone_equals_baseline<float>();
  expect_clone_equals_baseline<double>();
}

}  // namespace
}  // namespace baton::kernels::cpu
