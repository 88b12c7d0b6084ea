// Emulated NCCL: collectives and point-to-point messages. Each call is one pending operation on the
// caller's stream (baton_emu/runtime_api.h); the n-th collective of every rank's communicator is
// matched with the others' n-th (a different operation, count, type, op or root is a fatal error
// naming both ranks), and computed when the last rank posts it; the n-th send from a to b meets the
// n-th receive at b from a. Calls between ncclGroupStart and ncclGroupEnd are posted at the end.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

#include "nccl_state.h"

namespace baton_emu {
namespace {

std::string waiting_ranks(const Collective& c) {
  std::string missing;
  for (size_t r = 0; r < c.parts.size(); ++r) {
    if (!c.parts[r].posted) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  return missing;
}

ncclComm& ready_comm(ncclComm_t comm, cudaStream_t stream, const char* api) {
  ncclComm& c = live_comm(comm, api);
  if (!c.ready)
    fatal(std::string(api) + ": the communicator's initialisation has not completed (poll ncclCommGetAsyncError)");
  const int device = stream_device(stream, api);
  if (device != c.device) {
    fatal(std::string(api) + ": the stream belongs to device " + std::to_string(device) +
          " but the communicator (rank " + std::to_string(c.rank) + " of " + c.clique->name() + ") to device " +
          std::to_string(c.device));
  }
  return c;
}

struct CollectiveCall {
  CollectiveKind kind;
  const void* send;
  void* recv;
  size_t count;
  ncclDataType_t dtype;
  ncclRedOp_t op;
  int root;
};

bool same_arguments(const Collective& c, const CollectiveCall& call) {
  const bool reduces = c.kind == CollectiveKind::all_reduce || c.kind == CollectiveKind::reduce_scatter;
  return c.kind == call.kind && c.count == call.count && c.dtype == call.dtype && (!reduces || c.op == call.op) &&
         (c.kind != CollectiveKind::broadcast || c.root == call.root);
}

// Posts `rank`'s part of collective `number` (under the lock, at the call or at ncclGroupEnd).
void post_collective(ncclComm_t comm, uint64_t number, const CollectiveCall& call, cudaStream_t stream,
                     const char* api) {
  ncclComm& c = live_comm(comm, api);
  Clique& clique = *c.clique;
  const int ranks = clique.size;
  const size_t element = dtype_size(call.dtype);
  const size_t in_count =
      call.kind == CollectiveKind::reduce_scatter ? call.count * static_cast<size_t>(ranks) : call.count;
  const size_t out_count =
      call.kind == CollectiveKind::all_gather ? call.count * static_cast<size_t>(ranks) : call.count;
  std::vector<Access> accesses;
  const bool reads = call.kind != CollectiveKind::broadcast || call.root == c.rank;
  if (reads && in_count > 0) accesses.push_back({call.send, in_count * element, "sendbuff", false});
  if (out_count > 0) accesses.push_back({call.recv, out_count * element, "recvbuff", true});
  PendingWorkHandle work = enqueue_pending(stream, c.device, api, accesses);
  const std::string name = std::string(kind_name(call.kind)) + " #" + std::to_string(number) + " of " + clique.name();
  if (!clique.aborted.empty()) {
    c.async_error = ncclRemoteError;
    complete_pending(*work, true);
    return;
  }
  auto [it, created] = clique.collectives.try_emplace(number);
  Collective& collective = it->second;
  if (created) {
    collective.kind = call.kind;
    collective.count = call.count;
    collective.dtype = call.dtype;
    collective.op = call.op;
    collective.root = call.root;
    collective.first_rank = c.rank;
    collective.parts.resize(static_cast<size_t>(ranks));
  } else if (!same_arguments(collective, call)) {
    Collective mine = collective;
    mine.kind = call.kind;
    mine.count = call.count;
    mine.dtype = call.dtype;
    mine.op = call.op;
    mine.root = call.root;
    fatal(std::string(api) + ": collective #" + std::to_string(number) + " of " + clique.name() +
          " does not match across ranks: rank " + std::to_string(collective.first_rank) + " issued " +
          collective.describe() + ", rank " + std::to_string(c.rank) + " issued " + mine.describe());
  }
  RankPart& part = collective.parts[static_cast<size_t>(c.rank)];
  part.posted = true;
  part.send = call.send;
  part.recv = call.recv;
  part.work = work;
  std::weak_ptr<Clique> weak = c.clique;
  work->describe = [weak, number, name]() -> std::string {
    auto owner = weak.lock();
    if (!owner) return name + " is waiting";
    auto found = owner->collectives.find(number);
    if (found == owner->collectives.end()) return name + " is waiting";
    return name + " is waiting for ranks " + waiting_ranks(found->second) + " to issue it";
  };
  if (++collective.posted < ranks) return;
  compute_collective(collective);
  for (RankPart& done : collective.parts) complete_pending(*done.work, false);
  clique.collectives.erase(it);
}

ncclResult_t collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream, const char* api) {
  Lock lock(runtime_lock());
  if (comm == nullptr) return ncclInvalidArgument;
  if (aborted_comm(comm, api)) return ncclInvalidUsage;
  ncclComm& c = ready_comm(comm, stream, api);
  if (dtype_size(call.dtype) == 0 || call.dtype == ncclFloat8e4m3 || call.dtype == ncclFloat8e5m2) {
    return ncclInvalidArgument;  // fp8 is not emulated
  }
  if (call.op < 0 || call.op >= ncclNumOps) return ncclInvalidArgument;
  if (call.kind == CollectiveKind::broadcast && (call.root < 0 || call.root >= c.clique->size))
    return ncclInvalidArgument;
  if (call.count > 0 && (call.recv == nullptr || (call.send == nullptr && call.kind != CollectiveKind::broadcast))) {
    return ncclInvalidArgument;
  }
  const uint64_t number = c.next_collective++;
  DeferredCall deferred;
  deferred.has_stream = true;
  deferred.stream = stream;
  deferred.api = api;
  deferred.post = [=] {
    if (!comm->aborted) post_collective(comm, number, call, stream, api);  // aborted while this thread waited
  };
  run_or_defer(std::move(deferred));
  return ncclSuccess;
}

// Copies every matched pair at the heads of the (from, to) queues.
void match_messages(Clique& clique, int from, int to, const char* api) {
  auto& sends = clique.sends[{from, to}];
  auto& recvs = clique.recvs[{from, to}];
  while (!sends.empty() && !recvs.empty()) {
    Message& send = sends.front();
    Message& recv = recvs.front();
    if (send.count != recv.count || send.dtype != recv.dtype) {
      fatal(std::string(api) + ": send #" + std::to_string(send.number) + " from rank " + std::to_string(from) +
            " to rank " + std::to_string(to) + " of " + clique.name() + " carries " + std::to_string(send.count) + " " +
            dtype_name(send.dtype) + " but the matching receive expects " + std::to_string(recv.count) + " " +
            dtype_name(recv.dtype));
    }
    const size_t bytes = send.count * dtype_size(send.dtype);
    if (bytes > 0) with_device_memory_open([&] { std::memmove(recv.buffer, send.buffer, bytes); });
    complete_pending(*send.work, false);
    complete_pending(*recv.work, false);
    sends.pop_front();
    recvs.pop_front();
  }
}

ncclResult_t point_to_point(bool sending, void* buffer, size_t count, ncclDataType_t dtype, int peer, ncclComm_t comm,
                            cudaStream_t stream, const char* api) {
  Lock lock(runtime_lock());
  if (comm == nullptr) return ncclInvalidArgument;
  if (aborted_comm(comm, api)) return ncclInvalidUsage;
  ncclComm& c = ready_comm(comm, stream, api);
  if (dtype_size(dtype) == 0 || peer < 0 || peer >= c.clique->size || (count > 0 && buffer == nullptr)) {
    return ncclInvalidArgument;
  }
  const uint64_t number = sending ? c.sends_to[peer]++ : c.recvs_from[peer]++;
  DeferredCall deferred;
  deferred.has_stream = true;
  deferred.stream = stream;
  deferred.api = api;
  deferred.post = [=] {
    if (comm->aborted) return;  // aborted while this thread waited
    ncclComm& me = live_comm(comm, api);
    Clique& clique = *me.clique;
    const size_t bytes = count * dtype_size(dtype);
    std::vector<Access> accesses;
    if (bytes > 0) accesses.push_back({buffer, bytes, sending ? "sendbuff" : "recvbuff", !sending});
    PendingWorkHandle work = enqueue_pending(stream, me.device, api, accesses);
    if (!clique.aborted.empty()) {
      me.async_error = ncclRemoteError;
      complete_pending(*work, true);
      return;
    }
    const int from = sending ? me.rank : peer, to = sending ? peer : me.rank;
    const std::string name = std::string(sending ? "send #" : "recv #") + std::to_string(number) + " from rank " +
                             std::to_string(from) + " to rank " + std::to_string(to) + " of " + clique.name();
    work->describe = [name, sending, peer] {
      return name + " is waiting for rank " + std::to_string(peer) + " to issue the matching " +
             (sending ? "ncclRecv" : "ncclSend");
    };
    (sending ? clique.sends : clique.recvs)[{from, to}].push_back({buffer, count, dtype, number, work});
    match_messages(clique, from, to, api);
  };
  run_or_defer(std::move(deferred));
  return ncclSuccess;
}

}  // namespace

const char* kind_name(CollectiveKind kind) {
  constexpr const char* kNames[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter"};
  const auto index = static_cast<size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "collective";
}

std::string Collective::describe() const {
  std::string text = std::string(kind_name(kind)) + " of " + std::to_string(count) + " " + dtype_name(dtype);
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter)
    text += std::string(" (") + op_name(op) + ")";
  if (kind == CollectiveKind::broadcast) text += " (root " + std::to_string(root) + ")";
  return text;
}

}  // namespace baton_emu

using namespace baton_emu;

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective({CollectiveKind::all_reduce, sendbuff, recvbuff, count, datatype, op, 0}, comm, stream,
                    "ncclAllReduce");
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective({CollectiveKind::broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root}, comm, stream,
                    "ncclBroadcast");
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective({CollectiveKind::all_gather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0}, comm, stream,
                    "ncclAllGather");
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective({CollectiveKind::reduce_scatter, sendbuff, recvbuff, recvcount, datatype, op, 0}, comm, stream,
                    "ncclReduceScatter");
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return point_to_point(true, const_cast<void*>(sendbuff), count, datatype, peer, comm, stream, "ncclSend");
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return point_to_point(false, recvbuff, count, datatype, peer, comm, stream, "ncclRecv");
}

}  // extern "C"
