// Emulated NCCL: communicators, the cliques of ranks they form, collectives and point-to-point
// messages waiting for their peers. All of it is guarded by baton_emu::runtime_lock().
#pragma once

#include <nccl.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "baton_emu/runtime_api.h"

namespace baton_emu {

// Holds baton_emu::runtime_lock() for a scope.
using Lock = std::lock_guard<std::recursive_mutex>;

struct Clique;

// One rank's part of a collective.
struct RankPart {
  bool posted = false;
  const void* send = nullptr;
  void* recv = nullptr;
  PendingWorkHandle work;
};

enum class CollectiveKind { all_reduce, broadcast, all_gather, reduce_scatter };
const char* kind_name(CollectiveKind kind);

// One collective of a clique (the n-th of every rank's communicator), complete when every rank
// posted its part.
struct Collective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  size_t count = 0;  // all_gather: per rank input; reduce_scatter: per rank output
  ncclDataType_t dtype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  int first_rank = -1;  // the rank whose arguments the others are compared with
  std::vector<RankPart> parts;
  int posted = 0;
  std::string describe() const;  // "all_reduce of 16 float32 (sum)"
};

// One send or receive waiting for its match.
struct Message {
  void* buffer = nullptr;
  size_t count = 0;
  ncclDataType_t dtype = ncclFloat32;
  uint64_t number = 0;
  PendingWorkHandle work;
};

// The ranks that initialised together (one unique id, or one color of a split).
struct Clique {
  int id = 0;
  int size = 0;
  std::vector<ncclComm_t> members;  // by rank; nullptr once destroyed
  std::map<uint64_t, Collective> collectives;
  std::map<std::pair<int, int>, std::deque<Message>> sends, recvs;  // (from, to)
  std::string aborted;       // why every later operation fails ("rank 1 called ncclCommAbort")
  std::string name() const;  // "communicator 3 (4 ranks)"
};

}  // namespace baton_emu

// The communicator object of one rank (a handle is never freed, so a use after destroy is reported).
struct ncclComm {
  std::shared_ptr<baton_emu::Clique> clique;
  int rank = -1;
  int device = 0;
  bool blocking = true;
  bool ready = false;  // initialisation (or split) completed
  bool destroyed = false;
  bool aborted = false;  // destroyed by ncclCommAbort: later calls answer ncclInvalidUsage, not a fatal error
  ncclResult_t async_error = ncclSuccess;
  uint64_t next_collective = 0, next_split = 0;
  std::map<int, uint64_t> sends_to, recvs_from;
};

namespace baton_emu {

size_t dtype_size(ncclDataType_t dtype);
const char* dtype_name(ncclDataType_t dtype);
const char* op_name(ncclRedOp_t op);
// Reads every rank's inputs and writes every rank's outputs of a complete collective.
void compute_collective(const Collective& collective);

// The handle is live (fatal otherwise; nullptr is ncclInvalidArgument for the caller).
ncclComm& live_comm(ncclComm_t comm, const char* api);
// True (with a message on stderr) when `comm` was aborted: another thread may still issue to it (a
// watchdog aborts a communicator that a blocked thread uses), so the call fails instead of aborting.
bool aborted_comm(ncclComm_t comm, const char* api);
ncclComm_t new_comm(int device, bool blocking);
std::shared_ptr<Clique> new_clique(int size);

// ncclGroupStart/End: calls of one host thread between them are deferred to the outermost end.
// `wait_stream` (may be nullptr-stream: has_stream false) is waited for before anything is posted,
// `post` runs under the runtime lock, `ready`/`why` are waited for after every post of the group.
struct DeferredCall {
  bool has_stream = false;
  cudaStream_t stream = nullptr;
  const char* api = "";
  std::function<void()> post;
  std::function<bool()> ready;
  std::function<std::string()> why;
};
// Runs the call now (outside a group) or at the outermost ncclGroupEnd. Caller holds the lock once.
void run_or_defer(DeferredCall call);
// Between ncclGroupStart and the outermost ncclGroupEnd on the calling thread.
bool inside_group();

}  // namespace baton_emu
