// `baton bench comm`, the measurements: for every size, samples of baton's all-reduce alternating with
// samples of the baseline, each rank's medians, then the mean over the ranks (see bench_comm.h).
#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "parallel/comm/inproc_communicator.h"
#include "runtime/core/context.h"
#include "runtime/core/error.h"
#include "tools/bench_comm.h"
#include "tools/bench_timer.h"

namespace baton::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Rank `rank` of `buffers.size()` sums chunk `rank` of every buffer in rank order and writes the sums
// to every buffer: the in-process backend's work, without the communicator.
void plain_all_reduce_chunk(const std::vector<float*>& buffers, int64_t count, int rank) {
  const auto n = static_cast<int64_t>(buffers.size());
  const int64_t begin = count * rank / n, end = count * (rank + 1) / n;
  constexpr int64_t kBlock = 1024;  // as the backends' reduction (parallel/comm/reduce_kernel.cc)
  std::vector<float> sum(kBlock);
  for (int64_t at = begin; at < end; at += kBlock) {
    const int64_t len = std::min(kBlock, end - at);
    std::copy_n(buffers[0] + at, len, sum.data());
    for (size_t k = 1; k < buffers.size(); ++k) {
      const float* source = buffers[k] + at;
      for (int64_t i = 0; i < len; ++i) sum[static_cast<size_t>(i)] += source[i];
    }
    for (float* dest : buffers) std::copy_n(sum.data(), len, dest + at);
  }
}

constexpr int64_t kPattern = 13;

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void fill_pattern(const Tensor& buffer, int rank) {
  float* data = buffer.data<float>();
  for (int64_t i = 0; i < buffer.numel(); ++i) data[i] = static_cast<float>(i % kPattern + rank);
}

void check_pattern(const Tensor& buffer, int ranks, const char* what) {
  const float* data = buffer.data<float>();
  for (int64_t i = 0; i < buffer.numel(); ++i) {
    const auto want = static_cast<float>(ranks * (i % kPattern) + ranks * (ranks - 1) / 2);
    BATON_CHECK(data[i] == want, "bench comm: ", what, " of ", buffer.nbytes(), " bytes over ", ranks, " ranks gave ",
                data[i], " at element ", i, " where ", want, " was expected");
  }
}

std::pair<double, double> paired_medians(const CommBenchSettings& s, const std::function<double()>& a,
                                         const std::function<double()>& b) {
  std::vector<double> as, bs;
  for (int i = 0; i < s.warmup + s.repeats; ++i) {
    const double ta = a(), tb = b();
    if (i < s.warmup) continue;
    as.push_back(ta);
    bs.push_back(tb);
  }
  return {median(as), median(bs)};
}

std::vector<CommBenchRow> rows_from(const CommBenchSettings& s, const std::vector<double>& baton,
                                    const std::vector<double>& baseline) {
  std::vector<CommBenchRow> rows;
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    rows.push_back({.bytes = s.sizes[i],
                    .calls_per_sample = comm_calls_per_sample(s.sizes[i]),
                    .baton_s = baton[i],
                    .baseline_s = baseline[i]});
  }
  return rows;
}

std::vector<CommBenchRow> rows_over_rank_threads(const CommBenchSettings& s, std::barrier<>& sync,
                                                 const RankBody& rank_body) {
  const int n = s.ranks;
  // Per rank and size: baton's and the baseline's median seconds per all-reduce.
  std::vector<std::vector<double>> baton(n, std::vector<double>(s.sizes.size()));
  std::vector<std::vector<double>> base = baton;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const auto k = static_cast<size_t>(r);
      try {
        rank_body(r, baton[k], base[k]);
      } catch (...) {
        errors[k] = std::current_exception();
        sync.arrive_and_drop();  // the others must not wait for this rank (its communicator times out)
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::vector<double> baton_mean(s.sizes.size()), base_mean(s.sizes.size());
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    for (int r = 0; r < n; ++r) {
      baton_mean[i] += baton[static_cast<size_t>(r)][i] / n;
      base_mean[i] += base[static_cast<size_t>(r)][i] / n;
    }
  }
  return rows_from(s, baton_mean, base_mean);
}

int comm_calls_per_sample(int64_t bytes) {
  return static_cast<int>(std::clamp<int64_t>((int64_t{8} << 20) / std::max<int64_t>(bytes, 1), 1, 64));
}

std::vector<CommBenchRow> bench_comm_inproc(const CommBenchSettings& s) {
  const int n = s.ranks;
  const int64_t max_count = *std::max_element(s.sizes.begin(), s.sizes.end()) / 4;
  std::vector<std::unique_ptr<comm::Communicator>> comms = comm::make_inproc_communicators(n);
  std::vector<Tensor> buffers;
  std::vector<float*> data;
  for (int r = 0; r < n; ++r) {
    Context ctx(Device::cpu(r));
    buffers.push_back(Tensor::empty(Shape{max_count}, DType::f32, ctx));
    data.push_back(buffers.back().data<float>());
  }
  std::barrier sync(n);

  const auto rank_body = [&](int r, std::vector<double>& baton, std::vector<double>& plain) {
    comm::Communicator& comm = *comms[static_cast<size_t>(r)];
    Context ctx(Device::cpu(r));
    for (size_t i = 0; i < s.sizes.size(); ++i) {
      const int64_t count = s.sizes[i] / 4;
      const int calls = comm_calls_per_sample(s.sizes[i]);
      const Tensor mine = buffers[static_cast<size_t>(r)].slice(0, count);
      // Both give the right sums once before they are timed.
      fill_pattern(mine, r);
      comm.all_reduce(mine, comm::ReduceOp::sum, ctx.stream())->wait();
      check_pattern(mine, n, "baton's all-reduce (inproc)");
      sync.arrive_and_wait();  // every rank has read the result
      fill_pattern(mine, r);
      sync.arrive_and_wait();
      plain_all_reduce_chunk(data, count, r);
      sync.arrive_and_wait();
      check_pattern(mine, n, "the plain threads' all-reduce");
      const auto [baton_s, plain_s] = paired_medians(
          s,
          [&] {
            comm.barrier();
            const auto start = Clock::now();
            for (int c = 0; c < calls; ++c) comm.all_reduce(mine, comm::ReduceOp::sum, ctx.stream())->wait();
            return seconds_since(start) / calls;
          },
          [&] {
            sync.arrive_and_wait();
            const auto start = Clock::now();
            for (int c = 0; c < calls; ++c) {
              plain_all_reduce_chunk(data, count, r);
              sync.arrive_and_wait();  // an all-reduce is complete when every chunk is
            }
            return seconds_since(start) / calls;
          });
      baton[i] = baton_s;
      plain[i] = plain_s;
    }
  };
  return rows_over_rank_threads(s, sync, rank_body);
}

std::vector<CommBenchRow> bench_comm_mpi(const CommBenchSettings& s, const comm::MpiRuntime& runtime) {
  const std::unique_ptr<comm::Communicator> world = runtime.world(s.reduction);
  const int n = world->size(), rank = world->rank();
  const int64_t max_count = *std::max_element(s.sizes.begin(), s.sizes.end()) / 4;
  Context ctx(Device::cpu());
  const Tensor buffer = Tensor::empty(Shape{max_count}, DType::f32, ctx);
  const auto sizes = static_cast<int64_t>(s.sizes.size());
  // Baton's medians for every size, then the baseline's: one all-reduce gives their means over the ranks.
  const Tensor medians = Tensor::empty(Shape{2 * sizes}, DType::f64, ctx);
  for (int64_t i = 0; i < sizes; ++i) {
    const int64_t count = s.sizes[static_cast<size_t>(i)] / 4;
    const int calls = comm_calls_per_sample(s.sizes[static_cast<size_t>(i)]);
    const Tensor mine = buffer.slice(0, count);
    fill_pattern(mine, rank);
    world->all_reduce(mine, comm::ReduceOp::sum, ctx.stream())->wait();
    check_pattern(mine, n, "baton's all-reduce (mpi)");
    fill_pattern(mine, rank);
    runtime.time_raw_all_reduce(mine, 1);
    check_pattern(mine, n, "MPI_Allreduce");
    const auto [baton_s, raw_s] = paired_medians(
        s,
        [&] {
          world->barrier();
          const auto start = Clock::now();
          for (int c = 0; c < calls; ++c) world->all_reduce(mine, comm::ReduceOp::sum, ctx.stream())->wait();
          return seconds_since(start) / calls;
        },
        [&] { return runtime.time_raw_all_reduce(mine, calls) / calls; });
    medians.data<double>()[i] = baton_s;
    medians.data<double>()[sizes + i] = raw_s;
  }
  world->all_reduce(medians, comm::ReduceOp::mean, ctx.stream())->wait();
  const double* m = medians.data<double>();
  return rows_from(s, std::vector<double>(m, m + sizes), std::vector<double>(m + sizes, m + 2 * sizes));
}

}  // namespace baton::cli
