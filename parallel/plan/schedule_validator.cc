// validate_schedule: checks a schedule's structure (positions, ranges, matching sends and
// receives, completeness), then runs its programs as the executor would (sends buffered, receives
// waiting for their send), checking dependencies, in-flight bounds and deadlock.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "parallel/plan/schedule.h"
#include "parallel/plan/schedule_messages.h"
#include "parallel/plan/schedule_replicas.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace schedule_messages {  // the Validator beside the messages it matches
namespace {

// Where an instruction sits: program (position) and index in it.
struct Location {
  int position = -1;
  int index = -1;
};

class Validator {
 public:
  Validator(const Schedule& schedule, const std::vector<std::vector<int>>& consumers,
            const std::vector<int>& max_in_flight)
      : sched_(schedule), max_in_flight_(max_in_flight) {
    BATON_CHECK(sched_.devices >= 1, "schedule: devices must be at least 1, got ", sched_.devices);
    BATON_CHECK(sched_.stages >= 1 && sched_.stages % sched_.devices == 0, "schedule: stages (", sched_.stages,
                ") must be a positive multiple of devices (", sched_.devices, ")");
    BATON_CHECK(sched_.micro_batches >= 1, "schedule: micro_batches must be at least 1, got ", sched_.micro_batches);
    BATON_CHECK(static_cast<int>(sched_.programs.size()) == sched_.devices, "schedule: expected one program per ",
                "position (", sched_.devices, "), got ", sched_.programs.size());
    BATON_CHECK(max_in_flight_.empty() || static_cast<int>(max_in_flight_.size()) == sched_.stages,
                "max_in_flight: expected one bound per stage (", sched_.stages, "), got ", max_in_flight_.size());
    (void)replica_schedule::check_replicas(sched_, sched_.replicas);  // the rules make_schedule follows
    next_ = resolve_consumers(consumers, sched_.stages);
    prev_ = producers_of(next_);
  }

  ScheduleCheck run() {
    scan();
    check_complete();
    execute();
    ScheduleCheck check;
    check.peak_in_flight = sched_.replicated() ? replica_peak_in_flight(sched_) : peak_;  // per replica
    return check;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail_at(Location at, const Args&... what) const {
    const Instruction& ins = sched_.programs[at.position][at.index];
    BATON_FAIL("schedule: position ", at.position, ", instruction ", at.index, " (", describe(ins), "): ", what...);
  }

  bool contains(const std::vector<int>& list, int value) const {
    return std::find(list.begin(), list.end(), value) != list.end();
  }

  // Fields, positions, peers, duplicates, and a receive for every send and a send for every receive.
  void scan() {
    const int stages = sched_.stages;
    const int mbs = sched_.micro_batches;
    for (int p = 0; p < sched_.devices; ++p) {
      const auto& program = sched_.programs[p];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Instruction& ins = program[i];
        const Location at{p, i};
        if (ins.stage < 0 || ins.stage >= stages) fail_at(at, "stage out of range 0..", stages - 1);
        if (sched_.forward_only && !is_forward_only_op(ins.op)) {
          fail_at(at, "a forward-only schedule runs forwards and activation transfers only");
        }
        if (sched_.position_of(ins.stage) != p) {
          fail_at(at, "stage ", ins.stage, " runs on position ", sched_.position_of(ins.stage), " (stage % ",
                  sched_.devices, "), not on position ", p);
        }
        const bool per_stage = ins.op == Op::all_reduce || ins.op == Op::optimizer_step;
        if (per_stage) {
          if (ins.micro_batch != -1 || ins.peer != -1) fail_at(at, "micro_batch and peer must be -1");
          auto& seen = ins.op == Op::all_reduce ? all_reduce_at_ : optimizer_at_;
          if (auto [it, added] = seen.emplace(ins.stage, at); !added) {
            fail_at(at, "duplicate: the stage's ", op_name(ins.op), " is already at position ", it->second.position,
                    ", instruction ", it->second.index);
          }
          continue;
        }
        if (ins.micro_batch < 0 || ins.micro_batch >= mbs) fail_at(at, "micro-batch out of range 0..", mbs - 1);
        if (ins.op == Op::forward || ins.op == Op::backward) {
          if (ins.peer != -1) fail_at(at, "peer must be -1 for ", op_name(ins.op));
          auto& seen = ins.op == Op::forward ? forward_at_ : backward_at_;
          if (auto [it, added] = seen.emplace(std::pair{ins.stage, ins.micro_batch}, at); !added) {
            fail_at(at, "duplicate: the same ", op_name(ins.op), " is already at position ", it->second.position,
                    ", instruction ", it->second.index);
          }
          continue;
        }
        check_peer(ins, at);
        auto& seen = is_send(ins.op) ? send_at_ : recv_at_;
        if (auto [it, added] = seen.emplace(message_of(ins), at); !added) {
          fail_at(at, "duplicate: the same ", op_name(ins.op), " is already at position ", it->second.position,
                  ", instruction ", it->second.index);
        }
      }
    }
    for (const auto& [message, at] : send_at_) {
      if (!recv_at_.count(message)) {
        const Instruction& ins = sched_.programs[at.position][at.index];
        fail_at(at, "no matching recv: no ", describe_message(message, false), " on position ",
                sched_.position_of(message.to), ", so nothing receives this ", op_name(ins.op));
      }
    }
    for (const auto& [message, at] : recv_at_) {
      if (!send_at_.count(message)) {
        const Instruction& ins = sched_.programs[at.position][at.index];
        fail_at(at, "no matching send: no ", describe_message(message, true), " on position ",
                sched_.position_of(message.from), ", so this ", op_name(ins.op), " would wait forever");
      }
    }
  }

  // A send goes to a stage that reads this stage's output (or, for gradients, one it reads from).
  void check_peer(const Instruction& ins, Location at) const {
    const int stages = sched_.stages;
    if (ins.peer < 0 || ins.peer >= stages) fail_at(at, "peer stage out of range 0..", stages - 1);
    const int producer = ins.op == Op::send_activation || ins.op == Op::recv_gradient ? ins.stage : ins.peer;
    const int consumer = producer == ins.stage ? ins.peer : ins.stage;
    if (!contains(next_[producer], consumer)) {
      std::string listed;
      for (int c : next_[producer]) (listed += listed.empty() ? "" : ", ") += std::to_string(c);
      fail_at(at, "stage ", consumer, " does not read stage ", producer, "'s output (consumers of stage ", producer,
              ": ", listed.empty() ? "none" : listed, ")");
    }
  }

  // Every forward and backward, every transfer the consumers call for, and each stage's optimizer
  // step (forward-only: every forward and activation transfer).
  void check_complete() const {
    const bool training = !sched_.forward_only;
    for (int s = 0; s < sched_.stages; ++s) {
      const int p = sched_.position_of(s);
      for (int m = 0; m < sched_.micro_batches; ++m) {
        BATON_CHECK(forward_at_.count({s, m}), "schedule: position ", p, " never runs forward stage ", s, " mb ", m);
        BATON_CHECK(!training || backward_at_.count({s, m}), "schedule: position ", p, " never runs backward stage ", s,
                    " mb ", m);
        for (int c : next_[s]) {
          for (bool gradient : training ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
            const Message message = gradient ? Message{true, c, s, m} : Message{false, s, c, m};
            BATON_CHECK(send_at_.count(message), "schedule: position ", sched_.position_of(message.from),
                        " never runs ", describe_message(message, true), " (stage ", c, " reads stage ", s, ")");
          }
        }
      }
      BATON_CHECK(!training || optimizer_at_.count(s), "schedule: position ", p, " never runs optimizer_step stage ",
                  s);
    }
  }

  // Runs the programs round-robin; each position runs until a receive whose send has not run yet.
  void execute() {
    const int stages = sched_.stages;
    forward_done_.assign(stages, std::vector<bool>(sched_.micro_batches, false));
    backward_done_.assign(stages, std::vector<bool>(sched_.micro_batches, false));
    backwards_.assign(stages, 0);
    in_flight_.assign(stages, 0);
    peak_.assign(stages, 0);
    all_reduce_done_.assign(stages, false);
    std::vector<int> pc(sched_.devices, 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int p = 0; p < sched_.devices; ++p) {
        const auto& program = sched_.programs[p];
        while (pc[p] < static_cast<int>(program.size())) {
          const Instruction& ins = program[pc[p]];
          if (is_recv(ins.op) && !sent_.count(message_of(ins))) break;
          step(ins, {p, pc[p]});
          ++pc[p];
          progress = true;
        }
      }
    }
    std::string blocked;
    for (int p = 0; p < sched_.devices; ++p) {
      if (pc[p] == static_cast<int>(sched_.programs[p].size())) continue;
      const Instruction& ins = sched_.programs[p][pc[p]];
      const Location send = send_at_.at(message_of(ins));
      blocked += detail::concat("; position ", p, " waits at instruction ", pc[p], " (", describe(ins),
                                ") for its send at position ", send.position, ", instruction ", send.index);
    }
    BATON_CHECK(blocked.empty(), "schedule: deadlock, no position can progress", blocked);
  }

  void step(const Instruction& ins, Location at) {
    const int s = ins.stage;
    const int m = ins.micro_batch;
    switch (ins.op) {
      case Op::recv_activation:
      case Op::recv_gradient:
        received_.insert(message_of(ins));
        break;
      case Op::send_activation:
        if (!forward_done_[s][m])
          fail_at(at, "sends an activation before forward stage ", s, " mb ", m, " produced it");
        sent_.insert(message_of(ins));
        break;
      case Op::send_gradient:
        if (!backward_done_[s][m]) fail_at(at, "sends a gradient before backward stage ", s, " mb ", m, " produced it");
        sent_.insert(message_of(ins));
        break;
      case Op::forward:
        for (int p : prev_[s]) {
          if (!received_.count(Message{false, p, s, m})) {
            fail_at(at, "forward before its input from stage ", p, " arrived (recv_activation stage ", s, " mb ", m,
                    " from stage ", p, " must come first)");
          }
        }
        forward_done_[s][m] = true;
        if (sched_.forward_only) break;  // nothing is kept for a backward
        peak_[s] = std::max(peak_[s], ++in_flight_[s]);
        if (!max_in_flight_.empty() && in_flight_[s] > max_in_flight_[s]) {
          fail_at(at, "stage ", s, " holds ", in_flight_[s], " micro-batches in flight, more than max_in_flight ",
                  max_in_flight_[s]);
        }
        break;
      case Op::backward:
        if (!forward_done_[s][m])
          fail_at(at, "backward before its forward (forward stage ", s, " mb ", m, " has not run)");
        for (int c : next_[s]) {
          if (!received_.count(Message{true, c, s, m})) {
            fail_at(at, "backward before its output gradient from stage ", c, " arrived (recv_gradient stage ", s,
                    " mb ", m, " from stage ", c, " must come first)");
          }
        }
        backward_done_[s][m] = true;
        ++backwards_[s];
        --in_flight_[s];
        break;
      case Op::all_reduce:
        if (backwards_[s] != sched_.micro_batches) {
          fail_at(at, "all_reduce before the stage's last backward (", backwards_[s], " of ", sched_.micro_batches,
                  " backwards done)");
        }
        all_reduce_done_[s] = true;
        break;
      case Op::optimizer_step:
        if (backwards_[s] != sched_.micro_batches) {
          fail_at(at, "optimizer_step before the stage's last backward (", backwards_[s], " of ", sched_.micro_batches,
                  " backwards done)");
        }
        if (all_reduce_at_.count(s) && !all_reduce_done_[s])
          fail_at(at, "optimizer_step before the stage's all_reduce");
        break;
    }
  }

  const Schedule& sched_;
  const std::vector<int>& max_in_flight_;
  std::vector<std::vector<int>> next_;  // consumers
  std::vector<std::vector<int>> prev_;  // producers

  std::map<std::pair<int, int>, Location> forward_at_;
  std::map<std::pair<int, int>, Location> backward_at_;
  std::map<Message, Location> send_at_;
  std::map<Message, Location> recv_at_;
  std::map<int, Location> all_reduce_at_;
  std::map<int, Location> optimizer_at_;

  std::set<Message> sent_;
  std::set<Message> received_;
  std::vector<std::vector<bool>> forward_done_;
  std::vector<std::vector<bool>> backward_done_;
  std::vector<int> backwards_;
  std::vector<int> in_flight_;
  std::vector<int> peak_;
  std::vector<bool> all_reduce_done_;
};

}  // namespace
}  // namespace schedule_messages

ScheduleCheck validate_schedule(const Schedule& schedule, const std::vector<std::vector<int>>& consumers,
                                const std::vector<int>& max_in_flight) {
  return schedule_messages::Validator(schedule, consumers, max_in_flight).run();
}

}  // namespace baton::parallel
