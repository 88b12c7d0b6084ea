// Emulated NCCL: ncclGroupStart/End. The calls one host thread makes between them are posted at the
// outermost ncclGroupEnd: first every stream they use waits for its earlier pending work, then
// every call is posted (so a rank's send and receive on one stream do not wait for each other),
// then the initialisations and splits among them wait for their peers.
#include <mutex>
#include <vector>

#include "nccl_state.h"

namespace baton_emu {
namespace {

struct Group {
  int depth = 0;
  std::vector<DeferredCall> calls;
};
thread_local Group group;

void run_calls(std::vector<DeferredCall>& calls) {
  for (DeferredCall& call : calls) {
    if (call.has_stream) wait_for_stream(call.stream, call.api);
  }
  for (DeferredCall& call : calls) {
    if (call.post) call.post();
  }
  for (DeferredCall& call : calls) {
    if (call.ready) wait_until(call.ready, call.why, call.api);
  }
}

}  // namespace

bool inside_group() { return group.depth > 0; }

void run_or_defer(DeferredCall call) {
  if (group.depth > 0) {
    group.calls.push_back(std::move(call));
    return;
  }
  std::vector<DeferredCall> calls;
  calls.push_back(std::move(call));
  run_calls(calls);
}

}  // namespace baton_emu

using namespace baton_emu;

extern "C" {

ncclResult_t ncclGroupStart() {
  ++group.depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (group.depth == 0) return ncclInvalidUsage;
  if (--group.depth > 0) return ncclSuccess;
  Lock lock(runtime_lock());
  std::vector<DeferredCall> calls = std::move(group.calls);
  group.calls.clear();
  run_calls(calls);
  return ncclSuccess;
}

}  // extern "C"
