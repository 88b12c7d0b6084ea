// Emulated NCCL: the end of a communicator (finalize, destroy, abort) and its queries.
#include "nccl_state.h"

namespace baton_emu {
namespace {

// Waits (lock released) until none of `comm`'s operations is pending.
void wait_for_own_operations(ncclComm& comm, const char* api) {
  std::shared_ptr<Clique> clique = comm.clique;
  const int rank = comm.rank;
  auto pending_work = [clique, rank]() -> const PendingWork* {
    for (const auto& [number, collective] : clique->collectives) {
      const RankPart& part = collective.parts[static_cast<size_t>(rank)];
      if (part.posted && !part.work->done) return part.work.get();
    }
    for (auto* queues : {&clique->sends, &clique->recvs}) {
      for (const auto& [peers, messages] : *queues) {
        for (const Message& m : messages) {
          if ((queues == &clique->sends ? peers.first : peers.second) == rank && !m.work->done) return m.work.get();
        }
      }
    }
    return nullptr;
  };
  wait_until([&] { return pending_work() == nullptr; },
             [&] {
               const PendingWork* work = pending_work();
               return work != nullptr && work->describe ? work->describe() : std::string("an operation");
             },
             api);
}

}  // namespace
}  // namespace baton_emu

using namespace baton_emu;

extern "C" {

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  Lock lock(runtime_lock());
  if (comm == nullptr) return ncclInvalidArgument;
  ncclComm& c = live_comm(comm, "ncclCommFinalize");
  if (c.ready) wait_for_own_operations(c, "ncclCommFinalize");
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  Lock lock(runtime_lock());
  if (comm == nullptr) return ncclInvalidArgument;
  ncclComm& c = live_comm(comm, "ncclCommDestroy");
  if (!c.ready) fatal("ncclCommDestroy: the communicator's initialisation has not completed (ncclCommAbort ends it)");
  wait_for_own_operations(c, "ncclCommDestroy");
  c.destroyed = true;
  c.clique->members[static_cast<size_t>(c.rank)] = nullptr;
  return ncclSuccess;
}

// Ends the rank's pending operations as failed and releases what waits for them; the peers' parts
// of those operations stay pending (they time out or abort in turn), later operations of any rank
// of the clique fail at once with ncclRemoteError.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  Lock lock(runtime_lock());
  if (comm == nullptr) return ncclSuccess;
  ncclComm& c = live_comm(comm, "ncclCommAbort");
  c.destroyed = true;
  c.aborted = true;
  if (!c.ready) {
    fatal("ncclCommAbort of a communicator whose initialisation has not completed is not emulated");
  }
  Clique& clique = *c.clique;
  clique.members[static_cast<size_t>(c.rank)] = nullptr;
  if (clique.aborted.empty()) clique.aborted = "rank " + std::to_string(c.rank) + " called ncclCommAbort";
  for (auto& [number, collective] : clique.collectives) {
    RankPart& part = collective.parts[static_cast<size_t>(c.rank)];
    if (part.posted && !part.work->done) complete_pending(*part.work, true);
  }
  for (auto* queues : {&clique.sends, &clique.recvs}) {
    for (auto& [peers, messages] : *queues) {
      if ((queues == &clique.sends ? peers.first : peers.second) != c.rank) continue;
      for (Message& m : messages) complete_pending(*m.work, true);
      messages.clear();
    }
  }
  notify_progress();
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  Lock lock(runtime_lock());
  if (comm == nullptr || asyncError == nullptr) return ncclInvalidArgument;
  const ncclComm& c = live_comm(comm, "ncclCommGetAsyncError");
  *asyncError = !c.ready ? ncclInProgress : c.async_error;
  return ncclSuccess;
}

const char* ncclGetLastError(ncclComm_t) { return ""; }

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  Lock lock(runtime_lock());
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  const ncclComm& c = live_comm(comm, "ncclCommCount");
  if (!c.ready) return ncclInvalidUsage;
  *count = c.clique->size;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  Lock lock(runtime_lock());
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = live_comm(comm, "ncclCommCuDevice").device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  Lock lock(runtime_lock());
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  const ncclComm& c = live_comm(comm, "ncclCommUserRank");
  if (!c.ready) return ncclInvalidUsage;
  *rank = c.rank;
  return ncclSuccess;
}

}  // extern "C"
