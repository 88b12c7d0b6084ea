// The mpi backend's native reductions (MpiReduction::native, MPI_Allreduce and
// MPI_Reduce_scatter_block): integers exact, floats within rounding of the rank-order sum, every rank
// holding the same bits, f16 and bf16 still in rank order; and BATON_MPI_REDUCTION.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include "tests/parallel/comm/comm_checks.h"
#include "tests/parallel/comm/mpi_test_env.h"

namespace baton::comm {
namespace {

using testing::mpi_runtime;
using testing::mpi_world;

Stream& host() {
  static Stream s = Stream::create(Device::cpu());
  return s;
}

std::vector<double> as_doubles(const Tensor& t) {
  if (t.dtype() == DType::f64) return t.to_vector<double>(host());
  const std::vector<float> v = t.to_vector<float>(host());
  return {v.begin(), v.end()};
}

// `actual` equals `expected` up to `relative` times the sum of the inputs' magnitudes (bounded by
// size() here: inputs are in [-1, 1)).
::testing::AssertionResult close_to(const Tensor& actual, const Tensor& expected, double relative, int ranks) {
  const std::vector<double> a = as_doubles(actual), e = as_doubles(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - e[i]) <= relative * ranks)) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " where " << e[i] << " was expected";
    }
  }
  return ::testing::AssertionSuccess();
}

// Every rank's `result` gathered through the rank-order world: all must be byte-for-byte rank 0's.
void expect_same_on_every_rank(const Tensor& result) {
  Communicator& world = mpi_world();
  const Tensor all = Tensor::empty(Shape{world.size(), result.numel()}, result.dtype(), host());
  world.all_gather(result.reshape(Shape{result.numel()}), all.reshape(Shape{all.numel()}), host())->wait();
  for (int r = 1; r < world.size(); ++r) {
    EXPECT_TRUE(testing::same_bytes(all.slice(r, r + 1), all.slice(0, 1))) << "rank " << r << " differs from rank 0";
  }
}

void expect_reduced(const Tensor& actual, const Tensor& expected, int ranks) {
  switch (actual.dtype()) {
    case DType::f32:
      EXPECT_TRUE(close_to(actual, expected, 1e-6, ranks));
      break;
    case DType::f64:
      EXPECT_TRUE(close_to(actual, expected, 1e-15, ranks));
      break;
    default:  // integers exactly; f16 and bf16 are summed in rank order, bit for bit
      EXPECT_TRUE(testing::same_bytes(actual, expected));
  }
  expect_same_on_every_rank(actual);
}

class MpiNative : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { native_ = mpi_runtime().world(MpiReduction::native).release(); }
  static void TearDownTestSuite() { delete std::exchange(native_, nullptr); }
  static Communicator* native_;
};
Communicator* MpiNative::native_ = nullptr;

TEST_F(MpiNative, AllReduceOfEveryDTypeAndSize) {
  Communicator& comm = *native_;
  uint64_t seed = 100;
  for (const DType dtype : testing::kReducibleDTypes) {
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
      if (op == ReduceOp::mean && !is_floating(dtype)) continue;
      for (const int64_t numel : testing::kSizes) {
        std::vector<Tensor> inputs;
        for (int r = 0; r < comm.size(); ++r) inputs.push_back(testing::rank_input(Shape{numel}, dtype, r, seed));
        const Tensor expected = testing::expected_reduction(inputs, op);
        const Tensor buffer = inputs[static_cast<size_t>(comm.rank())];
        comm.all_reduce(buffer, op, host())->wait();
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::to_string(numel));
        expect_reduced(buffer, expected, comm.size());
        ++seed;
      }
    }
  }
}

TEST_F(MpiNative, ReduceScatterOfEveryDType) {
  Communicator& comm = *native_;
  const int64_t per_rank = 1031;
  for (const DType dtype : testing::kReducibleDTypes) {
    const ReduceOp op = is_floating(dtype) ? ReduceOp::mean : ReduceOp::sum;
    std::vector<Tensor> slices;
    Tensor mine;
    for (int r = 0; r < comm.size(); ++r) {
      const Tensor whole = testing::rank_input(Shape{comm.size(), per_rank}, dtype, r, 7);
      slices.push_back(baton::testing::copy_to(whole.slice(comm.rank(), comm.rank() + 1), host()));
      if (r == comm.rank()) mine = whole;
    }
    const Tensor output = Tensor::empty(Shape{1, per_rank}, dtype, host());
    comm.reduce_scatter(mine, output, op, host())->wait();
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor expected = testing::expected_reduction(slices, op);
    if (dtype == DType::f32 || dtype == DType::f64) {
      EXPECT_TRUE(close_to(output, expected, dtype == DType::f32 ? 1e-6 : 1e-15, comm.size()));
    } else {
      EXPECT_TRUE(testing::same_bytes(output, expected));
    }
  }
}

TEST_F(MpiNative, SplitCommunicatorsKeepTheReduction) {
  const std::unique_ptr<Communicator> half = native_->split(native_->rank() % 2, native_->rank());
  ASSERT_NE(half, nullptr);
  testing::check_all_reduce(*half, DType::i64, ReduceOp::sum, 4099, 31);  // exact either way
  const Tensor value = Tensor::from_vector(std::vector<double>{0.1 * (half->rank() + 1)}, Shape{1}, host());
  half->all_reduce(value, ReduceOp::sum, host())->wait();
  double expected = 0;
  for (int r = 0; r < half->size(); ++r) expected += 0.1 * (r + 1);
  EXPECT_NEAR(value.to_vector<double>(host())[0], expected, 1e-15);
}

TEST(MpiReductionSetting, ReadFromTheEnvironment) {
  ASSERT_EQ(unsetenv("BATON_MPI_REDUCTION"), 0);
  EXPECT_EQ(mpi_reduction_from_environment(), MpiReduction::native);
  ASSERT_EQ(setenv("BATON_MPI_REDUCTION", "rank-order", 1), 0);
  EXPECT_EQ(mpi_reduction_from_environment(), MpiReduction::rank_order);
  ASSERT_EQ(setenv("BATON_MPI_REDUCTION", "fast", 1), 0);
  EXPECT_ERROR_MENTIONS("BATON_MPI_REDUCTION is 'fast', expected native or rank-order",
                        mpi_reduction_from_environment());
  ASSERT_EQ(unsetenv("BATON_MPI_REDUCTION"), 0);
  EXPECT_EQ(mpi_reduction_name(MpiReduction::rank_order), "rank-order");
}

}  // namespace
}  // namespace baton::comm
