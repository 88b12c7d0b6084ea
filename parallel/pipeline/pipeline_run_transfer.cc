// PipelineRun's transfer instructions: sending a micro-batch's activations to a later stage or its
// input gradients to an earlier one (an event-ordered copy posted to the mailbox, or through the
// communicator to a stage of another process), and receiving them (gradients from several
// consumers of one value add up).
#include "kernels/elementwise.h"
#include "parallel/pipeline/pipeline_run.h"
#include "parallel/pipeline/transfer.h"

namespace baton::parallel {
namespace {

MessageKind kind_of(Op op) {
  return op == Op::send_activation || op == Op::recv_activation ? MessageKind::activation : MessageKind::gradient;
}

}  // namespace

void PipelineRun::send(const Instruction& ins, std::pair<TraceMark, TraceMark>* marks) {
  const int s = ins.stage, peer = ins.peer, mb = ins.micro_batch;
  StageState& state = this->state(s);
  const bool activation = kind_of(ins.op) == MessageKind::activation;
  // Activations go down the link s -> peer, gradients back up the link peer -> s.
  const std::vector<LinkValue>& link = activation ? routing_.link(s, peer) : routing_.link(peer, s);
  BATON_CHECK(!link.empty(), "stage ", s, " has no boundary value ", activation ? "for" : "from", " stage ", peer);
  std::vector<Tensor>& from =
      activation ? state.outputs[static_cast<size_t>(mb)] : state.input_grads[static_cast<size_t>(mb)];
  BATON_CHECK(!from.empty(), "nothing to send: the ", activation ? "forward" : "backward",
              " of this micro-batch has not run on this stage");
  std::vector<Tensor> tensors;
  for (const LinkValue& v : link) tensors.push_back(from[activation ? v.output : v.input]);
  const MailboxKey key{s, peer, mb, kind_of(ins.op)};
  if (routing_.local(peer)) {
    Message message = send_tensors(tensors, stage(s).context(), stage(peer).device(), routing_.streams(s, peer),
                                   marks ? settings_.recorder : nullptr, marks);
    mailbox_.post(key, std::move(message));
  } else {
    remote_->send(key, tensors, stage(s).context());
  }
  // Drop this side's references once every peer has its copy (the loss stays for mean_loss()).
  int& left = activation ? state.activation_sends_left[static_cast<size_t>(mb)]
                         : state.gradient_sends_left[static_cast<size_t>(mb)];
  if (--left == 0) from.clear();
}

void PipelineRun::recv(const Instruction& ins) {
  const int s = ins.stage, peer = ins.peer, mb = ins.micro_batch;
  StageState& state = this->state(s);
  Context& ctx = stage(s).context();
  const MailboxKey key{peer, s, mb, kind_of(ins.op)};
  std::vector<Tensor> tensors;
  if (routing_.local(peer)) {
    Message message = mailbox_.take(key);
    receive_tensors(message, ctx);
    tensors = std::move(message.tensors);
  } else {
    tensors = remote_->receive(key, ctx);
  }
  if (kind_of(ins.op) == MessageKind::activation) {
    const std::vector<LinkValue>& link = routing_.link(peer, s);
    BATON_CHECK(tensors.size() == link.size(), "stage ", s, " received ", tensors.size(), " activations from stage ",
                peer, ", expected ", link.size());
    for (size_t k = 0; k < link.size(); ++k) state.inputs[static_cast<size_t>(mb)][link[k].input] = tensors[k];
    return;
  }
  const std::vector<LinkValue>& link = routing_.link(s, peer);
  BATON_CHECK(tensors.size() == link.size(), "stage ", s, " received ", tensors.size(), " gradients from stage ", peer,
              ", expected ", link.size());
  std::vector<Tensor>& grads = state.output_grads[static_cast<size_t>(mb)];
  for (size_t k = 0; k < link.size(); ++k) {
    const Tensor& g = tensors[k];
    if (!g.defined()) continue;
    Tensor& acc = grads[link[k].output];
    if (!acc.defined()) {
      acc = g;
    } else {
      // A value read by several later stages (a skip tensor): its gradients add up.
      acc = kernels::sum_in_format_of(ctx, acc, g);
    }
  }
}

}  // namespace baton::parallel
