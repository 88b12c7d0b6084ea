// The transfers a schedule's instructions name (schedule_validator.cc): a send and its receive are
// one Message, activations producer -> consumer and gradients consumer -> producer.
#pragma once

#include <string>
#include <tuple>

#include "parallel/plan/schedule.h"

namespace baton::parallel::schedule_messages {

// A transfer, the same for its send and its receive: activations go producer -> consumer,
// gradients consumer -> producer.
struct Message {
  bool gradient = false;
  int from = 0;
  int to = 0;
  int micro_batch = 0;

  bool operator<(const Message& o) const {
    return std::tie(gradient, from, to, micro_batch) < std::tie(o.gradient, o.from, o.to, o.micro_batch);
  }
};

inline bool is_send(Op op) { return op == Op::send_activation || op == Op::send_gradient; }
inline bool is_recv(Op op) { return op == Op::recv_activation || op == Op::recv_gradient; }
inline bool is_forward_only_op(Op op) {
  return op == Op::forward || op == Op::send_activation || op == Op::recv_activation;
}

inline Message message_of(const Instruction& ins) {
  const bool gradient = ins.op == Op::send_gradient || ins.op == Op::recv_gradient;
  return is_send(ins.op) ? Message{gradient, ins.stage, ins.peer, ins.micro_batch}
                         : Message{gradient, ins.peer, ins.stage, ins.micro_batch};
}

inline std::string describe_message(const Message& m, bool as_send) {
  if (as_send) return describe({m.gradient ? Op::send_gradient : Op::send_activation, m.from, m.micro_batch, m.to});
  return describe({m.gradient ? Op::recv_gradient : Op::recv_activation, m.to, m.micro_batch, m.from});
}

}  // namespace baton::parallel::schedule_messages
