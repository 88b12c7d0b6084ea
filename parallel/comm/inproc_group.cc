// InprocGroup: collective rendezvous with matching checks, point-to-point channels, timeouts and abort.
#include "parallel/comm/inproc_group.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "parallel/comm/spin_wait.h"

namespace baton::comm {
namespace {

std::string op_at(OpKind kind, uint64_t seq, int rank, int size) {
  return detail::concat(op_name(kind), " #", seq, " on rank ", rank, " of ", size, " (inproc)");
}

std::string tensor_kind(DType dtype, const Shape& shape) { return detail::concat(dtype_name(dtype), " ", shape.str()); }

bool moves_data(OpKind kind) { return kind != OpKind::barrier && kind != OpKind::split; }

}  // namespace

InprocGroup::InprocGroup(int size) : size_(size), waiting_(static_cast<size_t>(size)) {
  BATON_CHECK(size >= 1, "an in-process communicator needs at least one rank, not ", size);
}

void InprocGroup::check_not_aborted() const {
  if (abort_reason_) throw Error("the in-process communicator was aborted: " + *abort_reason_);
}

void InprocGroup::abort(const std::string& reason) {
  std::lock_guard lock(mutex_);
  abort_locked(reason);
}

void InprocGroup::abort_locked(const std::string& reason) {
  if (abort_reason_) return;
  abort_reason_ = reason;
  for (auto& [ends, channel] : channels_) {
    for (PostedSend& send : channel) {
      send.work->fail(Error("the in-process communicator was aborted: " + reason));
    }
    channel.clear();
  }
  changed_.notify_all();
}

std::vector<int> InprocGroup::missing_ranks(const Slot& slot) const {
  std::vector<int> missing;
  for (int r = 0; r < size_; ++r) {
    if (slot.contributions.empty() || !slot.contributions[static_cast<size_t>(r)]) missing.push_back(r);
  }
  return missing;
}

std::string InprocGroup::mismatch_of(const Slot& slot, uint64_t seq) const {
  const Contribution& first = *slot.contributions[0];
  for (int r = 1; r < size_; ++r) {
    const Contribution& c = *slot.contributions[static_cast<size_t>(r)];
    const auto prefix = [&] { return detail::concat(op_name(first.kind), " #", seq, " (inproc): rank ", r); };
    if (c.kind != first.kind) {
      return detail::concat("collective #", seq, " (inproc): rank ", r, " issued ", op_name(c.kind),
                            " where rank 0 issued ", op_name(first.kind),
                            " (every rank issues the same collectives in the same order)");
    }
    if (!moves_data(c.kind)) continue;
    if (c.dtype != first.dtype || c.shape != first.shape) {
      return detail::concat(prefix(), " passed ", tensor_kind(c.dtype, c.shape), " where rank 0 passed ",
                            tensor_kind(first.dtype, first.shape), " (every rank passes the same dtype and shape)");
    }
    if (c.op != first.op) {
      return detail::concat(prefix(), " asked for ", reduce_op_name(c.op), " where rank 0 asked for ",
                            reduce_op_name(first.op));
    }
    if (c.root != first.root) {
      return detail::concat(prefix(), " named root ", c.root, " where rank 0 named root ", first.root);
    }
  }
  return "";
}

void InprocGroup::leave(uint64_t seq, Slot& slot) {
  if (++slot.left == size_) slots_.erase(seq);
}

void InprocGroup::run_collective(int rank, uint64_t seq, const Contribution& mine, std::chrono::milliseconds timeout,
                                 const Part& part) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<Contribution> all;
  Slot* slot = nullptr;
  {
    std::unique_lock lock(mutex_);
    check_not_aborted();
    slot = &slots_[seq];
    if (slot->contributions.empty()) slot->contributions.resize(static_cast<size_t>(size_));
    slot->contributions[static_cast<size_t>(rank)] = mine;
    if (++slot->arrived == size_) {
      slot->mismatch = mismatch_of(*slot, seq);
      changed_.notify_all();
    }
    waiting_[static_cast<size_t>(rank)] = Waiting{mine.kind, seq, -1};
    // A peer that arrives within the spin is seen without a sleep and wake-up on either side.
    lock.unlock();
    spin_until([&] { return slot->arrived.load(std::memory_order_acquire) == size_; });
    lock.lock();
    changed_.wait_until(lock, deadline, [&] { return slot->arrived == size_ || abort_reason_; });
    waiting_[static_cast<size_t>(rank)].reset();
    // Once every rank has arrived the collective completes, abort or not: their buffers are in use.
    if (slot->arrived < size_) {
      check_not_aborted();
      const std::string reason =
          detail::concat(op_at(mine.kind, seq, rank, size_), ": ", describe_ranks(missing_ranks(*slot)),
                         " did not issue it within ", timeout.count(), " ms");
      abort_locked(reason);
      throw Error(reason);
    }
    if (!slot->mismatch.empty()) {
      const std::string mismatch = slot->mismatch;
      leave(seq, *slot);
      throw Error(mismatch);
    }
    for (const auto& c : slot->contributions) all.push_back(*c);
  }
  std::optional<Error> failure;
  try {
    part(all);
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = Error(detail::concat(op_at(mine.kind, seq, rank, size_), ": ", e.what()));
  }
  {
    std::unique_lock lock(mutex_);
    if (++slot->finished == size_) changed_.notify_all();
    lock.unlock();
    spin_until([&] { return slot->finished.load(std::memory_order_acquire) == size_; });
    lock.lock();
    changed_.wait(lock, [&] { return slot->finished == size_; });  // parts never block: bounded
    leave(seq, *slot);
  }
  if (failure) throw *failure;
}

std::shared_ptr<InprocGroup> InprocGroup::split_group(uint64_t seq, int color, int members) {
  std::lock_guard lock(mutex_);
  auto& [group, remaining] = new_groups_[{seq, color}];
  if (!group) {
    group = std::make_shared<InprocGroup>(members);
    remaining = members;
  }
  std::shared_ptr<InprocGroup> result = group;
  if (--remaining == 0) new_groups_.erase({seq, color});
  return result;
}

SplitResult InprocGroup::split(int rank, uint64_t seq, int color, int key, std::chrono::milliseconds timeout) {
  Contribution mine;
  mine.kind = OpKind::split;
  mine.color = color;
  mine.key = key;
  SplitResult result;
  run_collective(rank, seq, mine, timeout, [&](const std::vector<Contribution>& all) {
    if (color < 0) return;
    std::vector<std::pair<int, int>> members;  // (key, old rank)
    for (int r = 0; r < size_; ++r) {
      if (all[static_cast<size_t>(r)].color == color) members.emplace_back(all[static_cast<size_t>(r)].key, r);
    }
    std::sort(members.begin(), members.end());
    result.rank = static_cast<int>(std::find(members.begin(), members.end(), std::pair{key, rank}) - members.begin());
    result.group = split_group(seq, color, static_cast<int>(members.size()));
  });
  return result;
}

void InprocGroup::post_send(int from, int to, uint64_t seq, const Tensor& tensor, std::shared_ptr<PendingWork> work) {
  {
    std::lock_guard lock(mutex_);
    check_not_aborted();
    channels_[{from, to}].push_back(PostedSend{seq, tensor, std::move(work)});
  }
  changed_.notify_all();
}

void InprocGroup::receive(int from, int to, uint64_t seq, const Tensor& into, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  PostedSend send;
  {
    std::unique_lock lock(mutex_);
    check_not_aborted();
    auto& channel = channels_[{from, to}];
    waiting_[static_cast<size_t>(to)] = Waiting{OpKind::recv, seq, from};
    changed_.wait_until(lock, deadline, [&] { return !channel.empty() || abort_reason_; });
    waiting_[static_cast<size_t>(to)].reset();
    check_not_aborted();
    if (channel.empty()) {
      const std::string reason =
          detail::concat(op_name(OpKind::recv), " #", seq, " from rank ", from, " on rank ", to, " of ", size_,
                         " (inproc): rank ", from, " did not send it within ", timeout.count(), " ms");
      abort_locked(reason);
      throw Error(reason);
    }
    send = std::move(channel.front());
    channel.pop_front();
  }
  const Tensor& sent = send.tensor;
  if (send.seq != seq || sent.dtype() != into.dtype() || sent.shape() != into.shape()) {
    const Error mismatch(detail::concat("recv #", seq, " from rank ", from, " on rank ", to, " of ", size_,
                                        " (inproc): rank ", from, " sent ", tensor_kind(sent.dtype(), sent.shape()),
                                        " (send #", send.seq, ") into ", tensor_kind(into.dtype(), into.shape())));
    send.work->fail(mismatch);
    throw mismatch;
  }
  if (into.nbytes() > 0) std::memcpy(into.data_ptr(), sent.data_ptr(), into.nbytes());
  send.work->complete();
}

std::string InprocGroup::describe_wait(int rank) const {
  std::lock_guard lock(mutex_);
  if (abort_reason_) return "the communicator was aborted: " + *abort_reason_;
  const std::optional<Waiting>& w = waiting_[static_cast<size_t>(rank)];
  if (!w) return detail::concat("rank ", rank, " is not waiting for a peer (its communication thread is busy)");
  if (w->kind == OpKind::recv) {
    return detail::concat("rank ", rank, " waits in recv #", w->seq, " from rank ", w->peer, ": rank ", w->peer,
                          " did not send it");
  }
  const auto slot = slots_.find(w->seq);
  const std::vector<int> missing = slot == slots_.end() ? std::vector<int>{} : missing_ranks(slot->second);
  if (missing.empty()) {
    return detail::concat("rank ", rank, " is in ", op_name(w->kind), " #", w->seq, ", which every rank has reached");
  }
  return detail::concat("rank ", rank, " waits in ", op_name(w->kind), " #", w->seq, ": ", describe_ranks(missing),
                        " did not issue it");
}

std::string InprocGroup::describe_send(int from, int to, uint64_t seq) const {
  {
    std::lock_guard lock(mutex_);
    const auto channel = channels_.find({from, to});
    const bool queued = channel != channels_.end() && std::any_of(channel->second.begin(), channel->second.end(),
                                                                  [&](const PostedSend& s) { return s.seq == seq; });
    if (!queued) return detail::concat("rank ", from, " has not reached it (its communication thread is busy)");
  }
  return detail::concat("rank ", to, " has not received it; ", describe_wait(to));
}

}  // namespace baton::comm
