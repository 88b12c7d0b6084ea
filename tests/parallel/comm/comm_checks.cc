// Backend-independent communicator checks against results computed here in rank order.
#include "tests/parallel/comm/comm_checks.h"

#include <cstring>
#include <exception>
#include <thread>

#include "parallel/comm/collective_args.h"

namespace baton::comm::testing {
namespace {

using baton::testing::bytes_of;

Stream host_stream() { return Stream::create(Device::cpu()); }

thread_local Device rank_device = Device::cpu();

// `t` (a host tensor) on the stream's device.
Tensor on_rank_device(const Tensor& t, const Stream& stream) {
  return t.device() == stream.device() ? t : baton::testing::copy_to(t, stream);
}

uint64_t seed_of(uint64_t seed, int rank) { return seed * 1000003u + static_cast<uint64_t>(rank) * 7919u + 1u; }

// The expected value of element i, folded over the inputs in order with the accumulator type Acc.
template <typename T, typename Acc, typename Load, typename Store>
void fold(const std::vector<Tensor>& inputs, ReduceOp op, const Tensor& out, Load load, Store store) {
  const auto n = static_cast<int64_t>(inputs.size());
  T* dst = static_cast<T*>(out.data_ptr());
  for (int64_t i = 0; i < out.numel(); ++i) {
    Acc acc = load(static_cast<const T*>(inputs[0].data_ptr())[i]);
    for (int64_t k = 1; k < n; ++k)
      acc = acc + load(static_cast<const T*>(inputs[static_cast<size_t>(k)].data_ptr())[i]);
    if (op == ReduceOp::mean) acc = acc / static_cast<Acc>(n);
    dst[i] = store(acc);
  }
}

// fn(dtype, op, numel) for every reducible dtype, sum and (floating dtypes) mean, and kSizes.
void for_each_reduction(const std::function<void(DType, ReduceOp, int64_t)>& fn) {
  for (DType dtype : kReducibleDTypes) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
      if (op == ReduceOp::mean && !is_floating(dtype)) continue;
      for (int64_t numel : kSizes) fn(dtype, op, numel);
    }
  }
}

}  // namespace

RankDevice::RankDevice(Device device) : previous_(rank_device) { rank_device = device; }
RankDevice::~RankDevice() { rank_device = previous_; }

Stream rank_stream() { return Stream::create(rank_device); }

std::string where(const Communicator& comm) {
  return detail::concat("rank ", comm.rank(), " of ", comm.size(), " (", comm.backend(), ")");
}

void run_ranks(const std::vector<std::unique_ptr<Communicator>>& comms, const std::function<void(Communicator&)>& fn) {
  std::vector<std::exception_ptr> errors(comms.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < comms.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(*comms[r]);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << " threw: " << e.what();
    }
  }
}

Tensor rank_input(const Shape& shape, DType dtype, int rank, uint64_t seed) {
  const double high = dtype == DType::u8 ? 256 : is_floating(dtype) ? 1 : 1000;
  const double low = dtype == DType::u8 ? 0 : -high;
  return baton::testing::random_tensor(shape, dtype, host_stream(), seed_of(seed, rank), low, high);
}

Tensor expected_reduction(const std::vector<Tensor>& inputs, ReduceOp op) {
  const Tensor out = Tensor::empty(inputs.at(0).shape(), inputs[0].dtype(), host_stream());
  const auto same = [](auto v) { return v; };
  switch (out.dtype()) {
    case DType::f32:
      fold<float, float>(inputs, op, out, same, same);
      break;
    case DType::f64:
      fold<double, double>(inputs, op, out, same, same);
      break;
    case DType::f16:
      fold<Half, float>(inputs, op, out, half_to_float, float_to_half);
      break;
    case DType::bf16:
      fold<BFloat16, float>(inputs, op, out, bfloat16_to_float, float_to_bfloat16);
      break;
    case DType::i32:
      fold<int32_t, int64_t>(inputs, op, out, same, [](int64_t v) { return static_cast<int32_t>(v); });
      break;
    case DType::i64:
      fold<int64_t, int64_t>(inputs, op, out, same, same);
      break;
    case DType::u8:
      ADD_FAILURE() << "u8 has no reduction";
  }
  return out;
}

::testing::AssertionResult same_bytes(const Tensor& actual, const Tensor& expected) {
  const Stream s = host_stream();
  const Stream actual_stream = actual.device().is_cpu() ? s : Stream::create(actual.device());
  if (actual.dtype() != expected.dtype() || actual.numel() != expected.numel()) {
    return ::testing::AssertionFailure() << "got " << dtype_name(actual.dtype()) << " " << actual.shape().str()
                                         << ", expected " << dtype_name(expected.dtype()) << " "
                                         << expected.shape().str();
  }
  const std::vector<unsigned char> a = bytes_of(actual, actual_stream);
  const std::vector<unsigned char> e = bytes_of(expected, s);
  if (a == e) return ::testing::AssertionSuccess();
  const size_t esize = dtype_size(actual.dtype());
  size_t first = 0;
  while (a[first] == e[first]) ++first;
  const size_t element = first / esize;
  const auto values_a = baton::testing::to_doubles(actual, actual_stream);
  const auto values_e = baton::testing::to_doubles(expected, s);
  return ::testing::AssertionFailure() << "element " << element << " of " << actual.numel() << " differs: got "
                                       << values_a[element] << ", expected " << values_e[element];
}

void check_all_reduce(Communicator& comm, DType dtype, ReduceOp op, int64_t numel, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (int r = 0; r < comm.size(); ++r) inputs.push_back(rank_input(Shape{numel}, dtype, r, seed));
  const Tensor expected = expected_reduction(inputs, op);
  const Stream s = rank_stream();
  const Tensor buffer = baton::testing::copy_to(inputs[static_cast<size_t>(comm.rank())], s);
  comm.all_reduce(buffer, op, s)->wait();
  EXPECT_TRUE(same_bytes(buffer, expected))
      << "all_reduce " << reduce_op_name(op) << " of " << numel << " " << dtype_name(dtype) << " on " << where(comm);
}

void check_broadcast(Communicator& comm, DType dtype, int root, int64_t numel, uint64_t seed) {
  const Tensor expected = rank_input(Shape{numel}, dtype, root, seed);
  const Stream s = rank_stream();
  const Tensor buffer = baton::testing::copy_to(rank_input(Shape{numel}, dtype, comm.rank(), seed), s);
  comm.broadcast(buffer, root, s)->wait();
  EXPECT_TRUE(same_bytes(buffer, expected))
      << "broadcast from root " << root << " of " << numel << " " << dtype_name(dtype) << " on " << where(comm);
}

void check_all_gather(Communicator& comm, DType dtype, int64_t numel, uint64_t seed) {
  const Stream h = host_stream();
  const Tensor expected = Tensor::empty(Shape{comm.size(), numel}, dtype, h);
  for (int r = 0; r < comm.size(); ++r)
    expected.slice(r, r + 1).copy_from(rank_input(Shape{1, numel}, dtype, r, seed), h);
  const Stream s = rank_stream();
  const Tensor output = baton::testing::poisoned(Shape{comm.size(), numel}, dtype, s);
  comm.all_gather(on_rank_device(rank_input(Shape{numel}, dtype, comm.rank(), seed), s), output, s)->wait();
  EXPECT_TRUE(same_bytes(output, expected))
      << "all_gather of " << numel << " " << dtype_name(dtype) << " on " << where(comm);
}

void check_reduce_scatter(Communicator& comm, DType dtype, ReduceOp op, int64_t numel_per_rank, uint64_t seed) {
  const Stream s = rank_stream();
  const Shape whole{comm.size(), numel_per_rank};
  std::vector<Tensor> my_slices;
  for (int r = 0; r < comm.size(); ++r) {
    my_slices.push_back(rank_input(whole, dtype, r, seed).slice(comm.rank(), comm.rank() + 1));
  }
  const Tensor expected = expected_reduction(my_slices, op);
  const Tensor output = baton::testing::poisoned(Shape{1, numel_per_rank}, dtype, s);
  comm.reduce_scatter(on_rank_device(rank_input(whole, dtype, comm.rank(), seed), s), output, op, s)->wait();
  EXPECT_TRUE(same_bytes(output, expected)) << "reduce_scatter " << reduce_op_name(op) << " of " << numel_per_rank
                                            << " " << dtype_name(dtype) << " per rank on " << where(comm);
}

void check_every_all_reduce(Communicator& comm) {
  uint64_t seed = 1;
  for_each_reduction(
      [&](DType dtype, ReduceOp op, int64_t numel) { check_all_reduce(comm, dtype, op, numel, seed++); });
}

void check_every_broadcast(Communicator& comm) {
  uint64_t seed = 100;
  for (int root = 0; root < comm.size(); ++root) {
    for (DType dtype : kAllDTypes) {
      for (int64_t numel : kSizes) check_broadcast(comm, dtype, root, numel, seed++);
    }
  }
}

void check_every_all_gather(Communicator& comm) {
  uint64_t seed = 200;
  for (DType dtype : kAllDTypes) {
    for (int64_t numel : kSizes) check_all_gather(comm, dtype, numel, seed++);
  }
}

void check_every_reduce_scatter(Communicator& comm) {
  uint64_t seed = 300;
  for_each_reduction(
      [&](DType dtype, ReduceOp op, int64_t numel) { check_reduce_scatter(comm, dtype, op, numel, seed++); });
}

void check_ring_exchange(Communicator& comm, int messages, int64_t numel, uint64_t seed) {
  const Stream s = rank_stream();
  const int next = (comm.rank() + 1) % comm.size();
  const int previous = (comm.rank() + comm.size() - 1) % comm.size();
  std::vector<WorkHandle> sends;
  std::vector<std::pair<WorkHandle, Tensor>> recvs;
  for (int m = 0; m < messages; ++m) {
    sends.push_back(
        comm.send(on_rank_device(rank_input(Shape{numel + m}, DType::f32, comm.rank(), seed + m), s), next, s));
  }
  for (int m = 0; m < messages; ++m) {
    const Tensor into = baton::testing::poisoned(Shape{numel + m}, DType::f32, s);
    recvs.emplace_back(comm.recv(into, previous, s), into);
  }
  for (int m = 0; m < messages; ++m) {
    recvs[static_cast<size_t>(m)].first->wait();
    EXPECT_TRUE(
        same_bytes(recvs[static_cast<size_t>(m)].second, rank_input(Shape{numel + m}, DType::f32, previous, seed + m)))
        << "message " << m << " from rank " << previous << " on " << where(comm);
  }
  for (const WorkHandle& w : sends) w->wait();
}

void check_split(Communicator& comm, bool drop_last) {
  const int rank = comm.rank();
  const bool dropped = drop_last && rank == comm.size() - 1;
  const std::unique_ptr<Communicator> part = comm.split(dropped ? -1 : rank % 2, -rank);
  if (dropped) {
    EXPECT_EQ(part, nullptr) << where(comm);
    return;
  }
  ASSERT_NE(part, nullptr) << where(comm);
  // Members of my color, in order of decreasing old rank (key = -rank).
  std::vector<int> members;
  for (int r = comm.size() - 1; r >= 0; --r) {
    if (r % 2 == rank % 2 && !(drop_last && r == comm.size() - 1)) members.push_back(r);
  }
  EXPECT_EQ(part->size(), static_cast<int>(members.size())) << where(comm);
  EXPECT_EQ(members.at(static_cast<size_t>(part->rank())), rank) << where(comm);
  EXPECT_EQ(part->backend(), comm.backend());
  const Stream s = rank_stream();
  const Tensor value = Tensor::from_vector(std::vector<int64_t>{int64_t{1} << rank}, Shape{1}, s);
  part->all_reduce(value, ReduceOp::sum, s)->wait();
  int64_t expected = 0;
  for (int r : members) expected += int64_t{1} << r;
  EXPECT_EQ(value.to_vector<int64_t>(s)[0], expected) << where(comm);
}

void check_many_in_flight(Communicator& comm) {
  const Stream s = rank_stream();
  std::vector<Tensor> buffers;
  std::vector<WorkHandle> works;
  for (int i = 0; i < 16; ++i) {
    buffers.push_back(Tensor::from_vector(std::vector<int64_t>{comm.rank() + i, 1}, Shape{2}, s));
    works.push_back(comm.all_reduce(buffers.back(), ReduceOp::sum, s));
  }
  works.back()->wait();
  const int64_t n = comm.size();
  for (int i = 0; i < 16; ++i) {
    EXPECT_TRUE(works[static_cast<size_t>(i)]->done())
        << "operation " << i << " before the last one on " << where(comm);
    EXPECT_EQ(buffers[static_cast<size_t>(i)].to_vector<int64_t>(s), (std::vector<int64_t>{n * (n - 1) / 2 + n * i, n}))
        << where(comm);
  }
}

void check_wait_on_and_barrier(Communicator& comm) {
  const Stream s = rank_stream();
  const Tensor buffer = Tensor::from_vector(std::vector<float>{1.5f}, Shape{1}, s);
  const WorkHandle work = comm.all_reduce(buffer, ReduceOp::mean, s);
  work->wait_on(s);
  // A CPU stream waits at wait_on; a CUDA stream's later work (the copy that reads) runs after it.
  if (s.device().is_cpu()) {
    EXPECT_TRUE(work->done()) << where(comm);
  }
  EXPECT_EQ(buffer.to_vector<float>(s)[0], 1.5f) << where(comm);
  EXPECT_TRUE(work->done()) << where(comm);
  comm.barrier();
  comm.barrier();
}

}  // namespace baton::comm::testing
