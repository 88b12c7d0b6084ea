// MpiCommunicator: the mpi backend's Communicator over one MPI communicator; every MPI call runs on the
// engine's communication thread, in issue order. Reductions are MPI's own or in rank order (MpiReduction).
#include <atomic>
#include <limits>

#include "parallel/comm/host_communicator.h"
#include "parallel/comm/mpi_calls.h"
#include "parallel/comm/mpi_engine.h"
#include "parallel/comm/pending_work.h"
#include "parallel/comm/spin_wait.h"
#include "runtime/core/log.h"

namespace baton::comm {
namespace {

// Elements per operation: MPI counts and displacements are int.
constexpr int64_t kMaxCount = std::numeric_limits<int>::max() / 2;

// What the communication thread learns of a new MPI communicator.
struct CommInfo {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  std::vector<int> world_ranks;  // of each rank
};

CommInfo describe_comm(MPI_Comm comm) {
  CommInfo info;
  info.comm = comm;
  check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm, &info.rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &info.size), "MPI_Comm_size");
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
  std::vector<int> ranks(static_cast<size_t>(info.size));
  for (int r = 0; r < info.size; ++r) ranks[static_cast<size_t>(r)] = r;
  info.world_ranks.resize(ranks.size());
  int code = MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (code == MPI_SUCCESS) {
    code = MPI_Group_translate_ranks(group, info.size, ranks.data(), world, info.world_ranks.data());
  }
  const int free_group = MPI_Group_free(&group);
  const int free_world = world == MPI_GROUP_NULL ? MPI_SUCCESS : MPI_Group_free(&world);
  check_mpi(code, "MPI_Group_translate_ranks");
  check_mpi(free_group, "MPI_Group_free");
  check_mpi(free_world, "MPI_Group_free");
  return info;
}

// Every rank of `info` but its own, as world ranks ("world ranks 1, 3"; "none").
std::string others_description(const CommInfo& info) {
  std::vector<int> others;
  for (int r = 0; r < info.size; ++r) {
    if (r != info.rank) others.push_back(info.world_ranks[static_cast<size_t>(r)]);
  }
  return others.empty() ? "none" : "world " + describe_ranks(others);
}

// Runs `body` (MPI calls); a failure ends the job, naming the operation `what`.
template <typename Body>
void check_or_abort(const MpiEngine& engine, const std::string& what, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    engine.abort(what + ": " + e.what());
  }
}

class MpiCommunicator final : public HostCommunicator {
 public:
  MpiCommunicator(std::shared_ptr<MpiEngine> engine, CommInfo info, MpiReduction reduction,
                  std::chrono::milliseconds timeout)
      : HostCommunicator("mpi", info.rank, info.size, timeout),
        engine_(std::move(engine)),
        info_(std::move(info)),
        others_(others_description(info_)),
        reduction_(reduction) {}

  ~MpiCommunicator() override {
    engine_->post([comm = info_.comm]() mutable {
      const int code = MPI_Comm_free(&comm);
      if (code != MPI_SUCCESS) log_error("baton mpi: MPI_Comm_free failed with MPI error code ", code);
    });
  }

  WorkHandle all_reduce(const Tensor& buffer, ReduceOp op, const Stream& stream) override {
    const std::string what = check_all_reduce(buffer, op);
    check_count(buffer.numel(), what);
    return collective(OpKind::all_reduce, StreamReady(stream),
                      [comm = info_.comm, rank = rank(), size = size(), buffer, op, native = native()] {
                        if (native) return all_reduce_native(comm, rank, size, buffer, op);
                        all_reduce_in_rank_order(comm, rank, size, buffer, op);
                      });
  }

  WorkHandle broadcast(const Tensor& buffer, int root, const Stream& stream) override {
    const std::string what = check_broadcast(buffer, root);
    check_count(buffer.numel(), what);
    return collective(OpKind::broadcast, StreamReady(stream), [comm = info_.comm, buffer, root] {
      check_mpi(MPI_Bcast(buffer.data_ptr(), static_cast<int>(buffer.numel()), mpi_type(buffer.dtype()), root, comm),
                "MPI_Bcast");
    });
  }

  WorkHandle all_gather(const Tensor& input, const Tensor& output, const Stream& stream) override {
    const std::string what = check_all_gather(input, output);
    check_count(output.numel(), what);
    const bool in_place = check_gather_overlap(input, output, rank(), what);
    return collective(OpKind::all_gather, StreamReady(stream), [comm = info_.comm, input, output, in_place] {
      const int n = static_cast<int>(input.numel());
      const MPI_Datatype type = mpi_type(input.dtype());
      check_mpi(MPI_Allgather(in_place ? MPI_IN_PLACE : input.data_ptr(), n, type, output.data_ptr(), n, type, comm),
                "MPI_Allgather");
    });
  }

  WorkHandle reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, const Stream& stream) override {
    const std::string what = check_reduce_scatter(input, output, op);
    check_count(input.numel(), what);
    return collective(OpKind::reduce_scatter, StreamReady(stream),
                      [comm = info_.comm, size = size(), input, output, op, native = native()] {
                        if (native) return reduce_scatter_native(comm, size, input, output, op);
                        reduce_scatter_in_rank_order(comm, size, input, output, op);
                      });
  }

  WorkHandle send(const Tensor& tensor, int peer, const Stream& stream) override {
    const auto [seq, what] = number_send(tensor, peer);
    check_count(tensor.numel(), what);
    auto work = make_work(what, peer_description(peer));
    // The caller usually computes next, on a core the communication thread shares (one core per
    // rank): the posted send then waits for a scheduler time slice, 2-5 ms measured, before MPI
    // sees it, and the receiving stage waits with it. So unless a blocking operation is ahead of
    // it, the caller yields the core until MPI_Isend has been called (bounded by kHandOffSpin).
    const bool only_sends_ahead = engine_->only_sends_ahead();
    auto posted = std::make_shared<std::atomic<bool>>(false);
    engine_->post_send([engine = engine_.get(), comm = info_.comm, tensor, peer, tag = tag_of(seq), work, what,
                        ready = StreamReady(stream), posted] {
      auto request = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
      check_or_abort(*engine, what, [&] {
        ready.wait();
        check_mpi(MPI_Isend(tensor.data_ptr(), static_cast<int>(tensor.numel()), mpi_type(tensor.dtype()), peer, tag,
                            comm, request.get()),
                  "MPI_Isend");
      });
      posted->store(true, std::memory_order_release);
      engine->add_in_flight([engine, request, tensor, work, what] {
        int finished = 0;
        check_or_abort(*engine, what,
                       [&] { check_mpi(MPI_Test(request.get(), &finished, MPI_STATUS_IGNORE), "MPI_Test"); });
        if (finished) work->complete();
        return finished != 0;
      });
    });
    if (only_sends_ahead) spin_until([&] { return posted->load(std::memory_order_acquire); });
    return work;
  }

  WorkHandle recv(const Tensor& tensor, int peer, const Stream& stream) override {
    const auto [seq, what] = number_recv(tensor, peer);
    check_count(tensor.numel(), what);
    return queue(what, peer_description(peer), StreamReady(stream),
                 [comm = info_.comm, tensor, peer, tag = tag_of(seq)] {
                   const MPI_Datatype type = mpi_type(tensor.dtype());
                   const int count = static_cast<int>(tensor.numel());
                   MPI_Status status;
                   check_mpi(MPI_Recv(tensor.data_ptr(), count, type, peer, tag, comm, &status), "MPI_Recv");
                   int received = 0;
                   check_mpi(MPI_Get_count(&status, type, &received), "MPI_Get_count");
                   BATON_CHECK(received == count, "rank ", peer, " sent ", received, " elements where ", count, " ",
                               dtype_name(tensor.dtype()), " elements were expected");
                 });
  }

  void barrier() override {
    collective(OpKind::barrier, StreamReady(), [comm = info_.comm] {
      check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    })->wait();
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    auto info = std::make_shared<CommInfo>();
    collective(OpKind::split, StreamReady(), [comm = info_.comm, color, key, info] {
      MPI_Comm part = MPI_COMM_NULL;
      check_mpi(MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, &part), "MPI_Comm_split");
      if (part != MPI_COMM_NULL) *info = describe_comm(part);
    })->wait();
    if (info->comm == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiCommunicator>(engine_, *info, reduction_, timeout());
  }

 private:
  bool native() const { return reduction_ == MpiReduction::native; }
  int tag_of(uint64_t seq) const { return static_cast<int>(seq % (static_cast<uint64_t>(engine_->tag_limit()) + 1)); }
  std::string peer_description(int peer) const {
    return detail::concat("world rank ", info_.world_ranks[static_cast<size_t>(peer)]);
  }

  static void check_count(int64_t count, const std::string& what) {
    BATON_CHECK(count <= kMaxCount, what, ": ", count, " elements; the mpi backend moves at most ", kMaxCount,
                " elements in one operation (MPI counts are int)");
  }
  // all_gather: the input may be this rank's own slot of the output (in place), nothing else of it.
  static bool check_gather_overlap(const Tensor& input, const Tensor& output, int rank, const std::string& what) {
    const auto* in = static_cast<const std::byte*>(input.data_ptr());
    const auto* out = static_cast<const std::byte*>(output.data_ptr());
    if (in == out + static_cast<size_t>(rank) * input.nbytes()) return input.nbytes() > 0;
    BATON_CHECK(in + input.nbytes() <= out || out + output.nbytes() <= in || input.nbytes() == 0, what,
                ": input overlaps output other than as this rank's slot of it");
    return false;
  }

  // A Work whose timed-out wait() ends the job, naming the operation and the peers that may have failed.
  std::shared_ptr<PendingWork> make_work(std::string what, std::string peers) const {
    return std::make_shared<PendingWork>(
        std::move(what), timeout(), [engine = std::weak_ptr(engine_), peers](const PendingWork& w) {
          if (w.done()) return;
          if (const auto e = engine.lock()) {
            e->abort(detail::concat(w.description(), " did not complete within ", w.timeout().count(),
                                    " ms; peers that may have failed or not issued it: ", peers));
          }
          BATON_FAIL(w.description(), " did not complete within ", w.timeout().count(), " ms");
        });
  }

  // Queues `body` (blocking MPI calls) on the communication thread, watched; a failure ends the job.
  WorkHandle queue(const std::string& what, const std::string& peers, StreamReady ready, std::function<void()> body) {
    auto work = make_work(what, peers);
    engine_->post([engine = engine_.get(), work, what, peers, timeout = timeout(), ready = std::move(ready),
                   body = std::move(body)] {
      work->start();
      engine->watch(what, timeout, peers);
      check_or_abort(*engine, what, [&] {
        ready.wait();
        body();
      });
      engine->unwatch();
      work->complete();
    });
    return work;
  }

  WorkHandle collective(OpKind kind, StreamReady ready, std::function<void()> body) {
    const uint64_t seq = take_collective_number();
    return queue(describe(kind, seq), others_, std::move(ready), std::move(body));
  }

  const std::shared_ptr<MpiEngine> engine_;
  const CommInfo info_;
  const std::string others_;  // the peers a timed-out collective names
  const MpiReduction reduction_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_world_communicator(const std::shared_ptr<MpiEngine>& engine,
                                                          MpiReduction reduction) {
  CommInfo info;
  engine->run([&] {
    engine->watch("MPI_Comm_dup(MPI_COMM_WORLD) for MpiRuntime::world", default_timeout(), "any rank");
    MPI_Comm world = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &world), "MPI_Comm_dup");
    engine->unwatch();
    info = describe_comm(world);
  });
  return std::make_unique<MpiCommunicator>(engine, std::move(info), reduction, default_timeout());
}

}  // namespace baton::comm
