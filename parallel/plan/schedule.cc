// Pipeline schedule generation: GPipe fill-drain, 1F1B (PipeDream-Flush) and Megatron's interleaved
// 1F1B as per-position compute orders, expanded into instruction lists with sends and receives.
#include "parallel/plan/schedule.h"

#include <algorithm>
#include <array>

#include "parallel/plan/schedule_replicas.h"
#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

constexpr std::array<std::string_view, 3> kKindNames = {"gpipe", "1f1b", "interleaved"};

// One compute step of a position's order: the forward or backward of (stage, micro-batch).
struct Step {
  bool forward = true;
  int stage = 0;
  int micro_batch = 0;
};

// GPipe fill-drain (torchgpipe's clock cycles): every forward in micro-batch order, then every
// backward in reverse micro-batch order, as autograd runs them (torchgpipe's phony edges make
// micro-batch i - 1's backward wait for micro-batch i's), so the last stage starts its backward
// with the micro-batch whose forward it has just finished.
std::vector<Step> gpipe_order(int stage, int micro_batches) {
  std::vector<Step> order;
  for (int m = 0; m < micro_batches; ++m) order.push_back({true, stage, m});
  for (int m = micro_batches - 1; m >= 0; --m) order.push_back({false, stage, m});
  return order;
}

// 1F1B (PipeDream-Flush, Megatron's non-interleaved schedule): min(S - s - 1, M) warm-up forwards,
// then one forward and one backward in turn, then the remaining backwards. Stage s then holds at
// most min(S - s, M) micro-batches between forward and backward.
std::vector<Step> one_f_one_b_order(int stage, int warmup_forwards, int micro_batches) {
  const int warmup = std::min(warmup_forwards, micro_batches);
  std::vector<Step> order;
  for (int m = 0; m < warmup; ++m) order.push_back({true, stage, m});
  for (int m = warmup; m < micro_batches; ++m) {
    order.push_back({true, stage, m});
    order.push_back({false, stage, m - warmup});
  }
  for (int m = micro_batches - warmup; m < micro_batches; ++m) order.push_back({false, stage, m});
  return order;
}

// Megatron's micro-batch group size (microbatch_group_size_per_vp_stage): the interleaved order
// runs micro-batches through the chunks in groups of this many. P (devices) when it divides M;
// otherwise the smallest N > P whose last group (M % N) is empty or at least P, Megatron's own
// validity rule (a shorter last group waits on itself and deadlocks); M when M < P.
int group_size(int devices, int micro_batches) {
  if (micro_batches <= devices) return micro_batches;
  int group = devices;
  while (micro_batches % group != 0 && micro_batches % group < devices) ++group;
  return group;
}

// Megatron's interleaved 1F1B for position r of P, each holding v chunks (stage = chunk * P + r).
// Virtual micro-batch k walks a table of (micro-batch, chunk): micro-batches in groups of N, each
// group through chunk 0, 1, ..., v - 1 in turn. Forward k runs table[k]; backward k runs table[k]'s
// micro-batch on chunk v - 1 - chunk. Position r first runs (P - r - 1) * 2 + (v - 1) * N warm-up
// forwards (capped at M * v), then one forward and one backward in turn, then the rest backwards.
std::vector<Step> interleaved_order(int position, int devices, int chunks, int micro_batches) {
  const int group = group_size(devices, micro_batches);
  std::vector<std::pair<int, int>> table;  // (micro-batch, chunk)
  for (int first = 0; first < micro_batches; first += group) {
    const int end = std::min(first + group, micro_batches);
    for (int c = 0; c < chunks; ++c) {
      for (int m = first; m < end; ++m) table.emplace_back(m, c);
    }
  }
  const int total = micro_batches * chunks;
  const int warmup = std::min((devices - position - 1) * 2 + (chunks - 1) * group, total);
  auto forward = [&](int k) { return Step{true, table[k].second * devices + position, table[k].first}; };
  auto backward = [&](int k) {
    return Step{false, (chunks - 1 - table[k].second) * devices + position, table[k].first};
  };
  std::vector<Step> order;
  for (int k = 0; k < warmup; ++k) order.push_back(forward(k));
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(forward(k + warmup));
    order.push_back(backward(k));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(backward(k));
  return order;
}

// Equal replication: each step of one group's order becomes G steps, micro-batch j of group g being
// the step's micro-batch g + G j, so that replica g's filtered program is the group's order.
std::vector<Step> expand_over_groups(const std::vector<Step>& order, int groups) {
  std::vector<Step> out;
  out.reserve(order.size() * static_cast<size_t>(groups));
  for (const Step& step : order) {
    for (int g = 0; g < groups; ++g) out.push_back({step.forward, step.stage, step.micro_batch * groups + g});
  }
  return out;
}

// Appends one compute step of a position's order with its transfers: receives before, sends after.
// `backwards_done` counts each stage's backwards so far (the all_reduce follows the last).
void append_step(std::vector<Instruction>& program, const Step& step, const std::vector<std::vector<int>>& next,
                 const std::vector<std::vector<int>>& prev, bool all_reduce, int micro_batches,
                 std::vector<int>& backwards_done) {
  const int s = step.stage;
  const int m = step.micro_batch;
  if (step.forward) {
    for (int p : prev[s]) program.push_back({Op::recv_activation, s, m, p});
    program.push_back({Op::forward, s, m, -1});
    for (int c : next[s]) program.push_back({Op::send_activation, s, m, c});
    return;
  }
  for (int c : next[s]) program.push_back({Op::recv_gradient, s, m, c});
  program.push_back({Op::backward, s, m, -1});
  for (int p : prev[s]) program.push_back({Op::send_gradient, s, m, p});
  // Delayed per-stage gradient communication: the stage's gradients are final after its last
  // backward, so its all-reduce starts here and overlaps the backwards still running elsewhere.
  if (all_reduce && ++backwards_done[s] == micro_batches) program.push_back({Op::all_reduce, s, -1, -1});
}

// The fields every schedule checks the same way.
Schedule schedule_shell(ScheduleKind kind, int devices, int chunks, int micro_batches) {
  const std::string_view name = schedule_kind_name(kind);
  BATON_CHECK(devices >= 1, name, " schedule: devices must be at least 1, got ", devices);
  BATON_CHECK(chunks >= 1, name, " schedule: chunks must be at least 1, got ", chunks);
  BATON_CHECK(micro_batches >= 1, name, " schedule: micro_batches must be at least 1, got ", micro_batches);
  Schedule schedule;
  schedule.kind = kind;
  schedule.devices = devices;
  schedule.stages = devices * chunks;
  schedule.micro_batches = micro_batches;
  schedule.programs.resize(static_cast<size_t>(devices));
  return schedule;
}

}  // namespace

bool Schedule::replicated() const {
  return std::any_of(replicas.begin(), replicas.end(), [](int r) { return r > 1; });
}

std::string_view schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::gpipe:
      return kKindNames[0];
    case ScheduleKind::one_f_one_b:
      return kKindNames[1];
    case ScheduleKind::interleaved:
      return kKindNames[2];
  }
  BATON_FAIL("unknown schedule kind ", static_cast<int>(kind));
}

ScheduleKind parse_schedule_kind(std::string_view name) {
  if (name == kKindNames[0]) return ScheduleKind::gpipe;
  if (name == kKindNames[1]) return ScheduleKind::one_f_one_b;
  if (name == kKindNames[2]) return ScheduleKind::interleaved;
  BATON_FAIL("unknown schedule '", name, "'; expected one of: gpipe, 1f1b, interleaved");
}

std::string_view op_name(Op op) {
  constexpr std::string_view kNames[] = {"forward",       "backward",      "send_activation", "recv_activation",
                                         "send_gradient", "recv_gradient", "all_reduce",      "optimizer_step"};
  const std::string_view name = enum_lookup<Op::optimizer_step>(op, kNames, "");
  BATON_CHECK(!name.empty(), "unknown schedule op ", static_cast<int>(op));
  return name;
}

std::string describe(const Instruction& ins) {
  std::string text(op_name(ins.op));
  text += " stage ";
  text += std::to_string(ins.stage);
  if (ins.op == Op::all_reduce || ins.op == Op::optimizer_step) return text;
  text += " mb ";
  text += std::to_string(ins.micro_batch);
  const bool send = ins.op == Op::send_activation || ins.op == Op::send_gradient;
  const bool recv = ins.op == Op::recv_activation || ins.op == Op::recv_gradient;
  if (send || recv) {
    text += send ? " to stage " : " from stage ";
    text += std::to_string(ins.peer);
  }
  return text;
}

std::vector<std::vector<int>> resolve_consumers(const std::vector<std::vector<int>>& consumers, int stages) {
  BATON_CHECK(stages >= 1, "a schedule needs at least one stage, got ", stages);
  std::vector<std::vector<int>> resolved(stages);
  if (consumers.empty()) {
    for (int s = 0; s + 1 < stages; ++s) resolved[s] = {s + 1};
    return resolved;
  }
  BATON_CHECK(static_cast<int>(consumers.size()) == stages, "stage consumers: expected one list per stage (", stages,
              " stages), got ", consumers.size(), " lists");
  for (int s = 0; s < stages; ++s) {
    resolved[s] = consumers[s];
    std::sort(resolved[s].begin(), resolved[s].end());
    for (size_t i = 0; i < resolved[s].size(); ++i) {
      const int c = resolved[s][i];
      BATON_CHECK(c > s && c < stages, "stage consumers: stage ", s, " lists consumer ", c,
                  ", expected a later stage in ", s + 1, "..", stages - 1);
      BATON_CHECK(i == 0 || resolved[s][i - 1] != c, "stage consumers: stage ", s, " lists consumer ", c, " twice");
    }
  }
  return resolved;
}

std::vector<std::vector<int>> producers_of(const std::vector<std::vector<int>>& consumers) {
  std::vector<std::vector<int>> producers(consumers.size());
  for (size_t s = 0; s < consumers.size(); ++s) {
    for (int c : consumers[s]) producers.at(static_cast<size_t>(c)).push_back(static_cast<int>(s));
  }
  return producers;  // ascending, since s ascends
}

Schedule make_schedule(ScheduleKind kind, int devices, int chunks, int micro_batches,
                       const std::vector<std::vector<int>>& consumers, bool all_reduce,
                       const std::vector<int>& replicas) {
  Schedule schedule = schedule_shell(kind, devices, chunks, micro_batches);
  BATON_CHECK(chunks == 1 || kind == ScheduleKind::interleaved, schedule_kind_name(kind),
              " schedule: chunks must be 1, got ", chunks,
              " (only the interleaved schedule runs several chunks per device)");
  const std::vector<std::vector<int>> next = resolve_consumers(consumers, schedule.stages);
  const std::vector<std::vector<int>> prev = producers_of(next);
  const int equal = replica_schedule::check_replicas(schedule, replicas);  // G, or 0 for unequal replication
  if (std::any_of(replicas.begin(), replicas.end(), [](int r) { return r > 1; })) schedule.replicas = replicas;
  const int groups = std::max(equal, 1);
  for (int r = 0; r < devices; ++r) {
    std::vector<Step> order;
    if (kind == ScheduleKind::gpipe) {
      order = gpipe_order(r, micro_batches / groups);
    } else if (chunks == 1) {  // 1f1b, and interleaved with one chunk per device, which is 1F1B
      const int warmup =
          equal == 0 ? replica_schedule::unequal_warmup(replicas)[static_cast<size_t>(r)] : devices - r - 1;
      order = one_f_one_b_order(r, warmup, micro_batches / groups);
    } else {
      order = interleaved_order(r, devices, chunks, micro_batches / groups);
    }
    if (groups > 1) order = expand_over_groups(order, groups);
    std::vector<Instruction>& program = schedule.programs[r];
    std::vector<int> backwards_done(schedule.stages, 0);
    for (const Step& step : order) append_step(program, step, next, prev, all_reduce, micro_batches, backwards_done);
    for (int s = r; s < schedule.stages; s += devices) program.push_back({Op::optimizer_step, s, -1, -1});
  }
  return schedule;
}

Schedule make_forward_schedule(ScheduleKind kind, int devices, int chunks, int micro_batches,
                               const std::vector<std::vector<int>>& consumers) {
  Schedule schedule = schedule_shell(kind, devices, chunks, micro_batches);
  schedule.forward_only = true;
  const std::vector<std::vector<int>> next = resolve_consumers(consumers, schedule.stages);
  const std::vector<std::vector<int>> prev = producers_of(next);
  std::vector<int> unused(schedule.stages, 0);
  // (micro-batch, stage) in lexicographic order on every position: each receive waits for a send
  // that comes earlier in that order, so no position waits on itself and nothing deadlocks.
  for (int m = 0; m < micro_batches; ++m) {
    for (int s = 0; s < schedule.stages; ++s) {
      append_step(schedule.programs[schedule.position_of(s)], {true, s, m}, next, prev, false, micro_batches, unused);
    }
  }
  return schedule;
}

}  // namespace baton::parallel
