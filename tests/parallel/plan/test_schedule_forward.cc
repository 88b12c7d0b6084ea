// Forward-only schedules (evaluation through the pipeline): they validate for every size, chain and
// skip consumers, hold nothing in flight, run each position micro-batch by micro-batch, and the
// validator refuses training instructions in them; JSON keeps the flag.
#include <gtest/gtest.h>

#include <algorithm>

#include "parallel/plan/schedule.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

int count_forward_op(const Schedule& s, Op op) {
  int n = 0;
  for (const auto& program : s.programs)
    n += static_cast<int>(std::count_if(program.begin(), program.end(), [&](auto& i) { return i.op == op; }));
  return n;
}

TEST(ForwardSchedule, ValidatesForEverySize) {
  for (int devices = 1; devices <= 6; ++devices) {
    for (int chunks = 1; chunks <= 3; ++chunks) {
      for (int mbs = 1; mbs <= 9; ++mbs) {
        SCOPED_TRACE(::testing::Message() << "P=" << devices << " v=" << chunks << " M=" << mbs);
        const Schedule s = make_forward_schedule(ScheduleKind::interleaved, devices, chunks, mbs);
        EXPECT_TRUE(s.forward_only);
        EXPECT_EQ(s.stages, devices * chunks);
        const ScheduleCheck check = validate_schedule(s);
        EXPECT_EQ(check.peak_in_flight, std::vector<int>(static_cast<size_t>(devices * chunks), 0));
        EXPECT_EQ(count_forward_op(s, Op::forward), devices * chunks * mbs);
        EXPECT_EQ(count_forward_op(s, Op::send_activation), (devices * chunks - 1) * mbs);
        for (Op op : {Op::backward, Op::send_gradient, Op::recv_gradient, Op::all_reduce, Op::optimizer_step}) {
          EXPECT_EQ(count_forward_op(s, op), 0) << op_name(op);
        }
      }
    }
  }
}

TEST(ForwardSchedule, EachPositionGoesMicroBatchByMicroBatch) {
  const Schedule s = make_forward_schedule(ScheduleKind::interleaved, 2, 2, 3);
  std::vector<std::pair<int, int>> order;  // (micro-batch, stage) of position 1's forwards
  for (const Instruction& i : s.programs[1]) {
    if (i.op == Op::forward) order.emplace_back(i.micro_batch, i.stage);
  }
  EXPECT_EQ(order, (std::vector<std::pair<int, int>>{{0, 1}, {0, 3}, {1, 1}, {1, 3}, {2, 1}, {2, 3}}));
}

TEST(ForwardSchedule, SkipConsumersSendStraightThere) {
  const std::vector<std::vector<int>> consumers = {{1, 3}, {2}, {3}, {}};
  const Schedule s = make_forward_schedule(ScheduleKind::gpipe, 4, 1, 2, consumers);
  validate_schedule(s, consumers);
  const auto& p0 = s.programs[0];
  EXPECT_NE(std::find(p0.begin(), p0.end(), Instruction{Op::send_activation, 0, 1, 3}), p0.end());
  EXPECT_ERROR_MENTIONS("stage 3 does not read stage 0's output", validate_schedule(s));
}

TEST(ForwardSchedule, ValidatorRefusesTrainingInstructionsAndMissingForwards) {
  Schedule s = make_forward_schedule(ScheduleKind::gpipe, 2, 1, 2);
  Schedule with_step = s;
  with_step.programs[0].push_back({Op::optimizer_step, 0, -1, -1});
  EXPECT_ERROR_MENTIONS("a forward-only schedule runs forwards and activation transfers only",
                        validate_schedule(with_step));
  Schedule missing = s;
  missing.programs[1].erase(
      std::find(missing.programs[1].begin(), missing.programs[1].end(), Instruction{Op::forward, 1, 1, -1}));
  EXPECT_ERROR_MENTIONS("never runs forward stage 1 mb 1", validate_schedule(missing));
  // A training schedule without its backwards is still incomplete.
  Schedule training = s;
  training.forward_only = false;
  EXPECT_ERROR_MENTIONS("never runs backward stage 0 mb 0", validate_schedule(training));
}

TEST(ForwardSchedule, JsonKeepsTheFlag) {
  const Schedule s = make_forward_schedule(ScheduleKind::one_f_one_b, 3, 1, 2);
  const nlohmann::json json = schedule_to_json(s);
  EXPECT_EQ(json.at("forward_only"), true);
  const Schedule back = schedule_from_json(nlohmann::json::parse(json.dump()), "eval.json");
  EXPECT_TRUE(back.forward_only);
  EXPECT_EQ(back.programs, s.programs);
  EXPECT_FALSE(schedule_to_json(make_schedule(ScheduleKind::one_f_one_b, 3, 1, 2)).contains("forward_only"));
}

}  // namespace
}  // namespace baton::parallel
