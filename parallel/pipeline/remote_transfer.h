// Transfers between pipeline stages run by different processes (a pipeline across processes): one
// micro-batch's activations or gradients go through the pipeline's communicator (its rank is the
// pipeline position), each tensor after a small header naming the message, the tensor's dtype and
// shape, so that the receiver allocates what arrives without knowing shapes in advance and takes
// messages in whatever order its schedule asks for them. See docs/hybrid.md ("Across processes").
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/pipeline/mailbox.h"
#include "runtime/core/context.h"

namespace baton::parallel {

// The transfers of one run (PipelineRun) to and from the other processes of its pipeline; used by
// the run's one worker (a process runs one pipeline position).
class RemoteTransfers {
 public:
  // `position_of(stage)`: the pipeline position (communicator rank) running the stage.
  RemoteTransfers(comm::Communicator& comm, std::function<int(int stage)> position_of);
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
  // Receives the next message from `peer` into arrived_.
  void take_next(int peer, Context& ctx);

  comm::Communicator& comm_;
  std::function<int(int)> position_of_;
  std::vector<comm::WorkHandle> sends_;
  std::map<MailboxKey, std::vector<Tensor>> arrived_;
};

}  // namespace baton::parallel
