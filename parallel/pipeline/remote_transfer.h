// Transfers between pipeline stages run by different processes (a pipeline across processes): one
// micro-batch's activations or gradients go through the link to the receiving position
// (pipeline_links.h), each tensor after a small header naming the message, the tensor's dtype, memory
// format and shape, so that the receiver allocates what arrives without knowing shapes in advance and takes
// messages in whatever order its schedule asks for them. See docs/hybrid.md ("Across processes").
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "parallel/pipeline/mailbox.h"
#include "parallel/pipeline/pipeline_links.h"
#include "runtime/core/context.h"

namespace baton::parallel {

// The transfers of one run (PipelineRun) to and from the other processes of its pipeline; used by
// the run's one worker (a process runs one pipeline position).
class RemoteTransfers {
 public:
  // `position_of(stage)`: the pipeline position running the stage.
  RemoteTransfers(const PipelineLinks& links, std::function<int(int stage)> position_of);
  // Waits for the sends still in flight (errors are then ignored: the run has already failed).
  ~RemoteTransfers();
  RemoteTransfers(const RemoteTransfers&) = delete;
  RemoteTransfers& operator=(const RemoteTransfers&) = delete;

  // Sends message `key` (undefined tensors included, as a header only) to the process running
  // stage key.to, after the work issued so far on ctx's stream.
  void send(const MailboxKey& key, const std::vector<Tensor>& tensors, Context& ctx);
  // Message `key` from the process running stage key.from, on ctx's device and ordered on its
  // stream; messages from that process arriving before it are kept for their own receive.
  std::vector<Tensor> receive(const MailboxKey& key, Context& ctx);
  // Waits for every send (after the run's last instruction: nothing is in flight after a step).
  void finish();

 private:
  // Receives the next message from position `from` into arrived_.
  void take_next(int from, Context& ctx);

  const PipelineLinks& links_;
  std::function<int(int)> position_of_;
  // A send in flight and its tensor, whose memory is kept until every send on its link has
  // completed: released earlier, its stream-ordered free would be queued behind the link's later
  // sends, which wait for the peer (the emulated GPU, which frees at enqueue, would block this
  // thread there until the peer receives them).
  struct InFlight {
    comm::Communicator* link;
    comm::WorkHandle work;
    Tensor tensor;
  };
  // Lets go of the tensors of the links whose sends have all completed.
  void release_completed();
  std::vector<InFlight> sends_;
  std::map<MailboxKey, std::vector<Tensor>> arrived_;
};

}  // namespace baton::parallel
