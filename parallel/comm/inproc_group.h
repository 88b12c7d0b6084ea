// InprocGroup: the state the ranks of one in-process communicator share: the rendezvous of each
// collective (every rank's buffers, checked to match), the channels of point-to-point messages,
// and the abort that turns a missing rank into an error on every rank instead of a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/pending_work.h"
#include "runtime/core/error.h"

namespace baton::comm {

// What one rank passed to a collective; the ranks' contributions must agree on all but the pointers.
struct Contribution {
  OpKind kind = OpKind::barrier;
  DType dtype = DType::f32;
  Shape shape;  // of the input (the buffer of all_reduce and broadcast)
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  int color = 0;  // split
  int key = 0;
  const void* input = nullptr;
  void* output = nullptr;
};

class InprocGroup;
struct SplitResult {
  std::shared_ptr<InprocGroup> group;  // null for a negative color
  int rank = -1;
};

class InprocGroup {
 public:
  explicit InprocGroup(int size);
  int size() const { return size_; }

  // This rank's share of a collective, run once every rank has contributed (it sees them all).
  using Part = std::function<void(const std::vector<Contribution>&)>;
  // Collective number `seq` for `rank`: waits until every rank has contributed (at most `timeout`,
  // then the group is aborted), checks that the contributions match, runs `part`, and returns once
  // every rank has run its part (so no rank's buffers are touched after it returns). Throws
  // baton::Error on a mismatch (on every rank), on timeout, or when the group was aborted.
  void run_collective(int rank, uint64_t seq, const Contribution& mine, std::chrono::milliseconds timeout,
                      const Part& part);
  // split as a collective: the ranks of each color, ordered by (key, rank), form a new group.
  SplitResult split(int rank, uint64_t seq, int color, int key, std::chrono::milliseconds timeout);

  // Send number `seq` from `from` to `to`: queued for the receiver, who copies it and completes `work`.
  void post_send(int from, int to, uint64_t seq, const Tensor& tensor, std::shared_ptr<PendingWork> work);
  // Receive number `seq` at `to` from `from`: waits (at most `timeout`) for the matching send and
  // copies it into `into`. Throws on timeout, abort, or a send of another dtype or shape.
  void receive(int from, int to, uint64_t seq, const Tensor& into, std::chrono::milliseconds timeout);

  // Fails every waiting and later operation of every rank with `reason` (the first reason stays).
  void abort(const std::string& reason);
  // For a wait() that timed out: what `rank`'s communication thread waits for ("rank 0 waits in
  // all_reduce #5: rank 2 did not issue it").
  std::string describe_wait(int rank) const;
  // For a send whose wait() timed out: whether the receiver took it.
  std::string describe_send(int from, int to, uint64_t seq) const;

 private:
  struct Slot {
    std::vector<std::optional<Contribution>> contributions;
    // Read without the mutex by the spins before a rank blocks; written with it held.
    std::atomic<int> arrived{0};
    std::atomic<int> finished{0};
    int left = 0;
    std::string mismatch;  // set by the last rank to arrive when the contributions disagree
  };
  struct PostedSend {
    uint64_t seq = 0;
    Tensor tensor;
    std::shared_ptr<PendingWork> work;
  };
  // What a rank's communication thread is blocked on (for describe_wait).
  struct Waiting {
    OpKind kind = OpKind::barrier;
    uint64_t seq = 0;
    int peer = -1;  // recv: the sender
  };

  void check_not_aborted() const;  // with mutex_ held
  void abort_locked(const std::string& reason);
  std::vector<int> missing_ranks(const Slot& slot) const;
  std::string mismatch_of(const Slot& slot, uint64_t seq) const;
  void leave(uint64_t seq, Slot& slot);
  std::shared_ptr<InprocGroup> split_group(uint64_t seq, int color, int members);

  const int size_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint64_t, Slot> slots_;
  std::map<std::pair<int, int>, std::deque<PostedSend>> channels_;  // (from, to)
  std::vector<std::optional<Waiting>> waiting_;
  std::map<std::pair<uint64_t, int>, std::pair<std::shared_ptr<InprocGroup>, int>> new_groups_;  // split
  std::optional<std::string> abort_reason_;
};

}  // namespace baton::comm
