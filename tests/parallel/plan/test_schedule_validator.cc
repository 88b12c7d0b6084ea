// The schedule validator rejects broken schedules (a 1F1B schedule broken one way at a time) with a
// message naming the problem, and schedules round-trip through JSON, whose bad input names the
// source and the field.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "parallel/plan/schedule.h"
#include "tests/parallel/plan/schedule_test_util.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using schedule_test::find;
using schedule_test::kB;
using schedule_test::kF;

// A 1F1B schedule to break: 3 positions, 4 micro-batches, all-reduce on.
Schedule base() { return make_schedule(ScheduleKind::one_f_one_b, 3, 1, 4, {}, true); }

TEST(ScheduleValidator, MissingRecv) {
  Schedule s = base();
  auto& p1 = s.programs[1];
  p1.erase(p1.begin() + find(p1, {Op::recv_activation, 1, 2, 0}));
  EXPECT_ERROR_MENTIONS("(send_activation stage 0 mb 2 to stage 1): no matching recv", validate_schedule(s));
}

TEST(ScheduleValidator, DuplicatedSend) {
  Schedule s = base();
  auto& p0 = s.programs[0];
  const Instruction send{Op::send_activation, 0, 1, 1};
  const int at = find(p0, send);
  p0.insert(p0.begin() + at + 2, send);
  EXPECT_ERROR_MENTIONS(detail::concat("position 0, instruction ", at + 2,
                                       " (send_activation stage 0 mb 1 to stage 1): duplicate: the same "
                                       "send_activation is already at position 0, instruction ",
                                       at),
                        validate_schedule(s));
}

TEST(ScheduleValidator, BackwardBeforeForward) {
  Schedule s = base();
  auto& p2 = s.programs[2];
  std::swap(p2[find(p2, {kF, 2, 1, -1})], p2[find(p2, {kB, 2, 1, -1})]);
  EXPECT_ERROR_MENTIONS("(backward stage 2 mb 1): backward before its forward", validate_schedule(s));
}

TEST(ScheduleValidator, ReceiveAfterTheComputeThatNeedsIt) {
  Schedule s = base();
  auto& p1 = s.programs[1];
  const int recv = find(p1, {Op::recv_activation, 1, 0, 0});
  std::swap(p1[recv], p1[recv + 1]);
  EXPECT_ERROR_MENTIONS("(forward stage 1 mb 0): forward before its input from stage 0 arrived", validate_schedule(s));
}

TEST(ScheduleValidator, SwappedOrderDeadlocks) {
  // Stage 0 waits for micro-batch 0's gradient before sending micro-batch 0 forward: nobody can move.
  Schedule s = base();
  auto& p0 = s.programs[0];
  const Instruction recv{Op::recv_gradient, 0, 0, 1};
  p0.erase(p0.begin() + find(p0, recv));
  p0.insert(p0.begin(), recv);
  const std::string message = ::baton::testing::error_message([&] { validate_schedule(s); });
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  EXPECT_NE(message.find("position 0 waits at instruction 0 (recv_gradient stage 0 mb 0 from stage 1)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("position 1 waits at instruction 0 (recv_activation stage 1 mb 0 from stage 0)"),
            std::string::npos)
      << message;
}

TEST(ScheduleValidator, StageOnTheWrongPosition) {
  Schedule s = make_schedule(ScheduleKind::gpipe, 2, 1, 2);
  std::swap(s.programs[0], s.programs[1]);
  EXPECT_ERROR_MENTIONS(
      "position 0, instruction 0 (recv_activation stage 1 mb 0 from stage 0): stage 1 runs on "
      "position 1",
      validate_schedule(s));
}

TEST(ScheduleValidator, MaxInFlight) {
  const Schedule gpipe = make_schedule(ScheduleKind::gpipe, 2, 1, 4);
  EXPECT_ERROR_MENTIONS("stage 0 holds 3 micro-batches in flight, more than max_in_flight 2",
                        validate_schedule(gpipe, {}, {2, 4}));
  const Schedule s = base();
  EXPECT_EQ(validate_schedule(s, {}, {3, 2, 1}).peak_in_flight, (std::vector<int>{3, 2, 1}));
  EXPECT_ERROR_MENTIONS("stage 1 holds 2 micro-batches in flight, more than max_in_flight 1",
                        validate_schedule(s, {}, {3, 1, 1}));
}

TEST(ScheduleValidator, AllReduceAndOptimizerOrder) {
  Schedule s = base();
  auto& p0 = s.programs[0];
  const int reduce = find(p0, {Op::all_reduce, 0, -1, -1});
  std::swap(p0[reduce], p0[reduce + 1]);  // the optimizer step now comes first
  EXPECT_ERROR_MENTIONS("(optimizer_step stage 0): optimizer_step before the stage's all_reduce", validate_schedule(s));

  Schedule early = base();
  auto& q0 = early.programs[0];
  const Instruction all_reduce{Op::all_reduce, 0, -1, -1};
  q0.erase(q0.begin() + find(q0, all_reduce));
  q0.insert(q0.begin() + find(q0, {kB, 0, 3, -1}), all_reduce);
  EXPECT_ERROR_MENTIONS("all_reduce before the stage's last backward (3 of 4 backwards done)",
                        validate_schedule(early));
}

TEST(ScheduleValidator, MissingComputeAndRanges) {
  Schedule s = base();
  auto& p2 = s.programs[2];
  p2.erase(p2.begin() + find(p2, {kB, 2, 3, -1}));
  EXPECT_ERROR_MENTIONS("position 2 never runs backward stage 2 mb 3", validate_schedule(s));

  Schedule r = base();
  r.programs[0][0].micro_batch = 4;
  EXPECT_ERROR_MENTIONS("position 0, instruction 0 (forward stage 0 mb 4): micro-batch out of range 0..3",
                        validate_schedule(r));
}

void expect_same(const Schedule& a, const Schedule& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.devices, b.devices);
  EXPECT_EQ(a.stages, b.stages);
  EXPECT_EQ(a.micro_batches, b.micro_batches);
  EXPECT_EQ(a.programs, b.programs);
}

TEST(ScheduleJson, RoundTrip) {
  const std::vector<std::vector<int>> skips = {{1, 3}, {2}, {3}, {}};
  for (const Schedule& s :
       {make_schedule(ScheduleKind::gpipe, 4, 1, 3, skips, true), make_schedule(ScheduleKind::one_f_one_b, 3, 1, 5),
        make_schedule(ScheduleKind::interleaved, 2, 2, 4, skips, true)}) {
    const nlohmann::json json = schedule_to_json(s);
    EXPECT_EQ(json.at("format"), "baton.schedule/1");
    const Schedule back = schedule_from_json(nlohmann::json::parse(json.dump()), "s.json");
    expect_same(back, s);
    EXPECT_EQ(schedule_to_json(back), json);
  }
}

TEST(ScheduleJson, BadInputNamesSourceAndField) {
  const nlohmann::json good = schedule_to_json(make_schedule(ScheduleKind::one_f_one_b, 2, 1, 2));
  nlohmann::json bad_op = good;
  bad_op["programs"][1][2]["op"] = "fwd";
  EXPECT_ERROR_MENTIONS("s.json: field 'programs[1][2].op': expected one of: forward, backward",
                        schedule_from_json(bad_op, "s.json"));
  EXPECT_ERROR_MENTIONS("(found 'fwd')", schedule_from_json(bad_op, "s.json"));
  nlohmann::json no_stage = good;
  no_stage["programs"][0][0].erase("stage");
  EXPECT_ERROR_MENTIONS("s.json: field 'programs[0][0].stage': expected a value (the field is missing)",
                        schedule_from_json(no_stage, "s.json"));
  nlohmann::json no_kind = good;
  no_kind.erase("kind");
  EXPECT_ERROR_MENTIONS("s.json: field 'kind': expected a value (the field is missing)",
                        schedule_from_json(no_kind, "s.json"));
  nlohmann::json kind = good;
  kind["kind"] = "zb";
  EXPECT_ERROR_MENTIONS("field 'kind': expected gpipe, 1f1b or interleaved (found 'zb')",
                        schedule_from_json(kind, "s.json"));
  nlohmann::json format = good;
  format["format"] = "baton.schedule/2";
  EXPECT_ERROR_MENTIONS("field 'format': expected 'baton.schedule/1' (found 'baton.schedule/2')",
                        schedule_from_json(format, "s.json"));
  nlohmann::json programs = good;
  programs["programs"].erase(1);
  EXPECT_ERROR_MENTIONS("field 'programs': expected one instruction list per device (2), found 1 list",
                        schedule_from_json(programs, "s.json"));
  nlohmann::json peer = good;
  peer["programs"][0][0]["peer"] = 1;  // a forward has no peer
  EXPECT_ERROR_MENTIONS("field 'programs[0][0].peer': expected no peer", schedule_from_json(peer, "s.json"));
  nlohmann::json typo = good;
  typo["programs"][0][0]["micro_btch"] = 0;
  EXPECT_ERROR_MENTIONS("unknown field 'programs[0][0].micro_btch'", schedule_from_json(typo, "s.json"));
  nlohmann::json negative = good;
  negative["programs"][0][0]["stage"] = -1;
  EXPECT_ERROR_MENTIONS("field 'programs[0][0].stage': expected an integer >= 0 (found -1)",
                        schedule_from_json(negative, "s.json"));
}

}  // namespace
}  // namespace baton::parallel
