// `baton bench comm --backend nccl`: baton's nccl communicators on the GPUs of this process, one
// thread per GPU, beside raw NCCL called as nccl-tests calls it (see bench_comm.h).
#include <algorithm>
#include <barrier>
#include <chrono>
#include <memory>
#include <vector>

#include "parallel/comm/nccl_communicator.h"
#include "parallel/comm/nccl_raw.h"
#include "runtime/core/context.h"
#include "runtime/core/error.h"
#include "tools/bench_comm.h"

namespace baton::cli {

std::vector<CommBenchRow> bench_comm_nccl(const CommBenchSettings& s) {
  const int n = s.ranks;
  const int64_t max_count = *std::max_element(s.sizes.begin(), s.sizes.end()) / 4;
  std::vector<Device> devices;
  for (int r = 0; r < n; ++r) devices.push_back(Device::cuda(r));
  std::vector<std::unique_ptr<comm::Communicator>> comms = comm::make_nccl_communicators(devices);
  comm::RawNcclAllReduce raw(devices);
  // Rank r's context and buffer on cuda:r, and a host buffer to fill and check it through.
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<Tensor> buffers, hosts;
  for (int r = 0; r < n; ++r) {
    contexts.push_back(std::make_unique<Context>(devices[static_cast<size_t>(r)]));
    buffers.push_back(Tensor::empty(Shape{max_count}, DType::f32, *contexts.back()));
    hosts.push_back(Tensor::empty_host(Shape{max_count}, DType::f32));
  }
  std::barrier sync(n);
  double raw_sample = 0;  // written by rank 0's thread between two barriers

  const auto rank_body = [&](int r, std::vector<double>& baton, std::vector<double>& base) {
    comm::Communicator& comm = *comms[static_cast<size_t>(r)];
    Context& ctx = *contexts[static_cast<size_t>(r)];
    for (size_t i = 0; i < s.sizes.size(); ++i) {
      const int64_t count = s.sizes[i] / 4;
      const int calls = comm_calls_per_sample(s.sizes[i]);
      Tensor mine = buffers[static_cast<size_t>(r)].slice(0, count);
      Tensor host = hosts[static_cast<size_t>(r)].slice(0, count);
      std::vector<Tensor> all;  // every rank's buffer at this size, for the raw baseline (rank 0)
      for (const Tensor& b : buffers) all.push_back(b.slice(0, count));
      const auto fill = [&] {
        fill_pattern(host, r);
        mine.copy_from(host, ctx.stream());
        ctx.synchronize();
      };
      const auto check = [&](const char* what) {
        host.copy_from(mine, ctx.stream());
        ctx.synchronize();
        check_pattern(host, n, what);
      };
      // One raw all-reduce of every buffer, made by rank 0's thread while the others wait.
      const auto raw_on_rank0 = [&](int raw_calls) {
        sync.arrive_and_wait();  // every rank's earlier work on its buffer has completed
        if (r == 0) raw_sample = raw.time_all_reduce(all, raw_calls) / raw_calls;
        sync.arrive_and_wait();
        return raw_sample;
      };
      // Both give the right sums once before they are timed.
      fill();
      comm.all_reduce(mine, comm::ReduceOp::sum, ctx.stream())->wait();
      check("baton's all-reduce (nccl)");
      fill();
      raw_on_rank0(1);
      check("ncclAllReduce");
      const auto [baton_s, raw_s] = paired_medians(
          s,
          [&] {
            comm.barrier();
            const auto start = std::chrono::steady_clock::now();
            for (int c = 0; c < calls; ++c) comm.all_reduce(mine, comm::ReduceOp::sum, ctx.stream())->wait();
            return seconds_since(start) / calls;
          },
          [&] { return raw_on_rank0(calls); });
      baton[i] = baton_s;
      base[i] = raw_s;
    }
  };
  return rows_over_rank_threads(s, sync, rank_body);
}

}  // namespace baton::cli
