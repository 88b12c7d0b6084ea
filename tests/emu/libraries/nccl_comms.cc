// Emulated NCCL: making communicators (unique ids, init by several threads or from one thread in a
// group, ncclCommInitAll, split). Initialisation
// completes when every rank arrived; a blocking communicator waits for that, a non-blocking one
// returns ncclInProgress and ncclCommGetAsyncError answers ncclInProgress until then.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "nccl_state.h"

namespace baton_emu {
namespace {

// Ranks that called ncclCommInitRank* with one unique id, until all arrived.
struct PendingInit {
  int size = 0;
  std::vector<ncclComm_t> members;
};
std::map<std::string, PendingInit>& pending_inits() {
  static std::map<std::string, PendingInit> inits;
  return inits;
}

// The ranks of a communicator that called ncclCommSplit for the n-th time.
struct SplitEntry {
  bool arrived = false;
  int color = NCCL_SPLIT_NOCOLOR, key = 0;
  ncclComm_t result = nullptr;
};
std::map<std::pair<Clique*, uint64_t>, std::vector<SplitEntry>>& pending_splits() {
  static std::map<std::pair<Clique*, uint64_t>, std::vector<SplitEntry>> splits;
  return splits;
}

std::vector<std::unique_ptr<ncclComm>>& all_comms() {
  static std::vector<std::unique_ptr<ncclComm>> comms;
  return comms;
}

bool blocking_of(const ncclConfig_t* config) {
  return config == nullptr || config->blocking == NCCL_CONFIG_UNDEF_INT || config->blocking != 0;
}

void join_clique(const std::vector<ncclComm_t>& members) {
  std::shared_ptr<Clique> clique = new_clique(static_cast<int>(members.size()));
  for (size_t r = 0; r < members.size(); ++r) {
    clique->members[r] = members[r];
    members[r]->clique = clique;
    members[r]->rank = static_cast<int>(r);
    members[r]->ready = true;
  }
  notify_progress();
}

std::string id_key(const ncclUniqueId& id) { return std::string(id.internal, NCCL_UNIQUE_ID_BYTES); }

ncclResult_t init_rank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank, const ncclConfig_t* config,
                       const char* api) {
  if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  const int device = current_device();
  const std::string key = id_key(id);
  if (key.compare(0, 9, "baton_emu") != 0) fatal(std::string(api) + ": the unique id was not made by ncclGetUniqueId");
  ncclComm_t created = new_comm(device, blocking_of(config));
  *comm = created;
  DeferredCall call;
  call.api = api;
  call.post = [=] {
    PendingInit& init = pending_inits()[key];
    if (init.members.empty()) {
      init.size = nranks;
      init.members.assign(static_cast<size_t>(nranks), nullptr);
    }
    if (init.size != nranks) {
      fatal(std::string(api) + ": rank " + std::to_string(rank) + " passed nranks " + std::to_string(nranks) +
            " but another rank of the same unique id passed " + std::to_string(init.size));
    }
    if (init.members[static_cast<size_t>(rank)] != nullptr) {
      fatal(std::string(api) + ": rank " + std::to_string(rank) + " initialised twice with the same unique id");
    }
    init.members[static_cast<size_t>(rank)] = created;
    if (std::count(init.members.begin(), init.members.end(), nullptr) == 0) {
      join_clique(init.members);
      pending_inits().erase(key);
    }
  };
  if (created->blocking) {
    call.ready = [=] { return created->ready; };
    call.why = [=] {
      std::string missing;
      auto it = pending_inits().find(key);
      for (int r = 0; it != pending_inits().end() && r < nranks; ++r) {
        if (it->second.members[static_cast<size_t>(r)] == nullptr) missing.append(" ").append(std::to_string(r));
      }
      return "rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
             " initialises a communicator and waits for ranks" + missing;
    };
  }
  run_or_defer(std::move(call));
  return created->ready || inside_group() || created->blocking ? ncclSuccess : ncclInProgress;
}

// Ranks of the finished split round: a new clique per color, ranked by (key, old rank).
void finish_split(std::vector<SplitEntry>& entries) {
  std::map<int, std::vector<std::pair<std::pair<int, int>, ncclComm_t>>> by_color;
  for (size_t r = 0; r < entries.size(); ++r) {
    if (entries[r].color != NCCL_SPLIT_NOCOLOR) {
      by_color[entries[r].color].push_back({{entries[r].key, static_cast<int>(r)}, entries[r].result});
    }
  }
  for (auto& [color, ranked] : by_color) {
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ncclComm_t> members;
    for (const auto& entry : ranked) members.push_back(entry.second);
    join_clique(members);
  }
}

}  // namespace

std::string Clique::name() const {
  return "communicator " + std::to_string(id) + " (" + std::to_string(size) + (size == 1 ? " rank)" : " ranks)");
}

ncclComm& live_comm(ncclComm_t comm, const char* api) {
  const auto& comms = all_comms();
  const bool known = std::any_of(comms.begin(), comms.end(), [&](const auto& c) { return c.get() == comm; });
  if (!known)
    fatal(std::string(api) + ": not a communicator made by ncclCommInitRank, ncclCommInitAll or ncclCommSplit");
  if (comm->destroyed) fatal(std::string(api) + ": the communicator was destroyed (ncclCommDestroy or ncclCommAbort)");
  return *comm;
}

bool aborted_comm(ncclComm_t comm, const char* api) {
  const auto& comms = all_comms();
  const bool known = std::any_of(comms.begin(), comms.end(), [&](const auto& c) { return c.get() == comm; });
  if (!known || !comm->aborted) return false;
  std::fprintf(stderr, "baton_emu: %s: the communicator was aborted (ncclInvalidUsage)\n", api);
  return true;
}

ncclComm_t new_comm(int device, bool blocking) {
  auto comm = std::make_unique<ncclComm>();
  comm->device = device;
  comm->blocking = blocking;
  all_comms().push_back(std::move(comm));
  return all_comms().back().get();
}

std::shared_ptr<Clique> new_clique(int size) {
  static int next_id = 0;
  auto clique = std::make_shared<Clique>();
  clique->id = next_id++;
  clique->size = size;
  clique->members.assign(static_cast<size_t>(size), nullptr);
  return clique;
}

}  // namespace baton_emu

using namespace baton_emu;

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return ncclInvalidArgument;
  static std::atomic<uint64_t> next{0};
  std::memset(uniqueId->internal, 0, NCCL_UNIQUE_ID_BYTES);
  const std::string text = "baton_emu unique id " + std::to_string(next++);
  std::memcpy(uniqueId->internal, text.data(), text.size());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  Lock lock(runtime_lock());
  return init_rank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  Lock lock(runtime_lock());
  return init_rank(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  Lock lock(runtime_lock());
  if (comm == nullptr || ndev < 1) return ncclInvalidArgument;
  std::vector<ncclComm_t> members;
  for (int r = 0; r < ndev; ++r) {
    const int device = devlist == nullptr ? r : devlist[r];
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || device < 0 || device >= count) return ncclInvalidArgument;
    members.push_back(new_comm(device, true));
  }
  join_clique(members);
  std::copy(members.begin(), members.end(), comm);
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  Lock lock(runtime_lock());
  const char* api = "ncclCommSplit";
  if (comm == nullptr || newcomm == nullptr || color < NCCL_SPLIT_NOCOLOR) return ncclInvalidArgument;
  if (aborted_comm(comm, api)) return ncclInvalidUsage;
  ncclComm& parent = live_comm(comm, api);
  if (!parent.ready) fatal(std::string(api) + ": the communicator's initialisation has not completed");
  ncclComm_t created = color == NCCL_SPLIT_NOCOLOR ? nullptr : new_comm(parent.device, blocking_of(config));
  *newcomm = created;
  const auto round = std::make_pair(parent.clique.get(), parent.next_split++);
  const int rank = parent.rank, size = parent.clique->size;
  auto done = std::make_shared<bool>(false);
  DeferredCall call;
  call.api = api;
  call.post = [=] {
    std::vector<SplitEntry>& entries = pending_splits()[round];
    if (entries.empty()) entries.resize(static_cast<size_t>(size));
    entries[static_cast<size_t>(rank)] = {true, color, key, created};
    if (std::all_of(entries.begin(), entries.end(), [](const SplitEntry& e) { return e.arrived; })) {
      finish_split(entries);
      pending_splits().erase(round);
    }
    *done = true;
  };
  if (blocking_of(config)) {
    call.ready = [=] { return pending_splits().count(round) == 0 && *done; };
    call.why = [=] {
      return "rank " + std::to_string(rank) + " splits " + round.first->name() + " and waits for its other ranks";
    };
  }
  run_or_defer(std::move(call));
  return created == nullptr || created->ready || inside_group() || created->blocking ? ncclSuccess : ncclInProgress;
}

}  // extern "C"
