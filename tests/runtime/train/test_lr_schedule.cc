// LR schedules: values at boundaries, warm-up, continuity at the cosine-to-linear switch, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "runtime/core/error.h"
#include "runtime/train/lr_schedule.h"

namespace baton {
namespace {

LrSchedule parse(const nlohmann::json& j) { return LrSchedule::from_json(j, "train.json: lr_schedule"); }

TEST(LrSchedule, StepAndMultistep) {
  const LrSchedule step = parse({{"type", "step"}, {"base_lr", 1.0}, {"step_size", 10}, {"gamma", 0.5}});
  EXPECT_DOUBLE_EQ(step.at(0), 1.0);
  EXPECT_DOUBLE_EQ(step.at(9), 1.0);
  EXPECT_DOUBLE_EQ(step.at(10), 0.5);
  EXPECT_DOUBLE_EQ(step.at(25), 0.25);
  const LrSchedule multi = parse({{"type", "multistep"}, {"base_lr", 0.1}, {"milestones", {30, 60}}});
  EXPECT_DOUBLE_EQ(multi.at(29), 0.1);
  EXPECT_NEAR(multi.at(30), 0.01, 1e-15);
  EXPECT_NEAR(multi.at(60), 0.001, 1e-15);
}

TEST(LrSchedule, LinearAndCosineWithWarmup) {
  const LrSchedule cos = parse({{"type", "cosine"},
                                {"base_lr", 0.4},
                                {"final_lr", 0.0},
                                {"total_steps", 110},
                                {"warmup_steps", 10},
                                {"warmup_start_lr", 0.04}});
  EXPECT_DOUBLE_EQ(cos.at(0), 0.04);
  EXPECT_DOUBLE_EQ(cos.at(5), 0.22);
  EXPECT_DOUBLE_EQ(cos.at(10), 0.4);
  EXPECT_NEAR(cos.at(60), 0.2, 1e-15);  // halfway through the decay
  EXPECT_NEAR(cos.at(110), 0.0, 1e-15);
  EXPECT_NEAR(cos.at(500), 0.0, 1e-15);  // holds the final value
  const LrSchedule lin = parse({{"type", "linear"}, {"base_lr", 1.0}, {"final_lr", 0.1}, {"total_steps", 10}});
  EXPECT_DOUBLE_EQ(lin.at(0), 1.0);
  EXPECT_NEAR(lin.at(5), 0.55, 1e-15);
  EXPECT_DOUBLE_EQ(lin.at(10), 0.1);
}

TEST(LrSchedule, CosineLinearIsContinuousAtTheSwitchThenLinear) {
  const LrSchedule h = parse(
      {{"type", "cosine_linear"}, {"base_lr", 0.1}, {"final_lr", 0.001}, {"total_steps", 1000}, {"switch_step", 700}});
  const double at_switch = 0.001 + (0.1 - 0.001) * 0.5 * (1 + std::cos(std::numbers::pi * 0.7));
  EXPECT_NEAR(h.at(700), at_switch, 1e-15);
  EXPECT_NEAR(h.at(701) - h.at(700), (0.001 - at_switch) / 300.0, 1e-12);  // linear slope after the switch
  EXPECT_NEAR(h.at(850), (at_switch + 0.001) / 2, 1e-12);
  EXPECT_NEAR(h.at(1000), 0.001, 1e-15);
  // Before the switch it is the cosine curve.
  EXPECT_NEAR(h.at(300), 0.001 + 0.099 * 0.5 * (1 + std::cos(std::numbers::pi * 0.3)), 1e-15);
  // No jump anywhere: neighbouring steps differ by little.
  for (int64_t s = 1; s <= 1000; ++s) EXPECT_LT(std::abs(h.at(s) - h.at(s - 1)), 1e-3) << s;
}

TEST(LrSchedule, JsonRoundTrip) {
  for (const nlohmann::json& j : {nlohmann::json{{"type", "cosine_linear"},
                                                 {"base_lr", 0.1},
                                                 {"total_steps", 100},
                                                 {"switch_step", 50},
                                                 {"warmup_steps", 5}},
                                  nlohmann::json{{"type", "multistep"}, {"milestones", {3, 7}}, {"gamma", 0.2}}}) {
    const LrSchedule s = parse(j);
    const LrSchedule back = parse(s.to_json());
    for (int64_t step = 0; step < 120; ++step) EXPECT_EQ(s.at(step), back.at(step));
  }
}

TEST(LrSchedule, BadConfigsNameTheField) {
  auto message = [](const nlohmann::json& j) {
    try {
      parse(j);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({{"type", "cosnie"}}).find("field 'type' is \"cosnie\""), std::string::npos);
  EXPECT_NE(message({{"type", "step"}}).find("step_size must be > 0"), std::string::npos);
  EXPECT_NE(message({{"type", "cosine"}, {"total_steps", 5}, {"warmup_steps", 5}}).find("total_steps"),
            std::string::npos);
  EXPECT_NE(message({{"type", "multistep"}, {"milestones", {5, 3}}}).find("increasing"), std::string::npos);
  EXPECT_NE(message({{"type", "constant"}, {"lr", 0.1}}).find("unknown field 'lr'"), std::string::npos);
  EXPECT_NE(message({{"type", "constant"}, {"base_lr", "high"}}).find("field 'base_lr'"), std::string::npos);
  EXPECT_NE(message({{"type", "cosine_linear"}, {"total_steps", 10}, {"switch_step", 10}}).find("switch_step"),
            std::string::npos);
}

}  // namespace
}  // namespace baton
