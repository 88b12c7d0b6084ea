// Chrome trace tests: the JSON structure of a simulated hybrid step (complete events, process and
// lane names, non-negative durations) and an atomically written file that parses back.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "parallel/plan/planner.h"
#include "parallel/plan/schedule.h"
#include "parallel/plan/simulator.h"
#include "parallel/plan/trace.h"
#include "tests/parallel/plan/simulator_fixtures.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

// Two groups x two stages, slow links: forward, backward, transfers, all-reduces and optimiser steps.
SimulationResult hybrid_run() {
  const Profile profile = fixtures::chain_profile({.nodes = 4, .optimizer_ms_per_param_byte = 1e-4});
  const Plan plan = fixtures::chain_plan(profile, 2, 8, 4, 2);  // 2 micro-batches per group
  const Schedule schedule = plan_schedule(plan, profile, ScheduleKind::one_f_one_b);
  return simulate(plan, schedule, profile, fixtures::test_cluster(4, 1.0, 20.0));
}

TEST(ChromeTraceTest, SimulatedStepHasCompleteEventsAndNamedLanes) {
  const SimulationResult r = hybrid_run();
  const nlohmann::json trace = chrome_trace_json(r.events, r.lanes, {"predicted"});
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  const nlohmann::json& events = trace.at("traceEvents");
  ASSERT_TRUE(events.is_array());
  std::set<int> named_threads;
  std::set<std::string> thread_names;
  std::set<std::string> categories;
  int process_names = 0;
  size_t complete = 0;
  for (const nlohmann::json& e : events) {
    const std::string ph = e.at("ph");
    EXPECT_EQ(e.at("pid"), 0);
    if (ph == "M") {
      if (e.at("name") == "process_name") {
        ++process_names;
        EXPECT_EQ(e.at("args").at("name"), "predicted");
      } else if (e.at("name") == "thread_name") {
        named_threads.insert(e.at("tid").get<int>());
        thread_names.insert(e.at("args").at("name").get<std::string>());
      }
      continue;
    }
    ASSERT_EQ(ph, "X");
    ++complete;
    EXPECT_FALSE(e.at("name").get<std::string>().empty());
    EXPECT_GE(e.at("ts").get<double>(), 0.0);
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
    EXPECT_TRUE(named_threads.count(e.at("tid").get<int>())) << e.dump();  // metadata come first
    categories.insert(e.at("cat").get<std::string>());
  }
  EXPECT_EQ(process_names, 1);
  EXPECT_EQ(complete, r.events.size());
  EXPECT_EQ(named_threads.size(), r.lanes.size());
  for (const char* lane : {"device 0 compute", "device 1 compute", "device 2 compute", "device 3 compute",
                           "stage 0 all-reduce", "link 0->1", "link 1->0", "link 2->3", "link 3->2"}) {
    EXPECT_TRUE(thread_names.count(lane)) << lane;
  }
  EXPECT_EQ(categories, (std::set<std::string>{"allreduce", "backward", "forward", "optimizer", "transfer"}));
  // The last event ends the step.
  double last = 0;
  for (const TraceEvent& e : r.events) last = std::max(last, e.start_us + e.duration_us);
  EXPECT_NEAR(last, r.step_ms * 1e3, 1e-6);
}

TEST(ChromeTraceTest, WritesAParseableFile) {
  const SimulationResult r = hybrid_run();
  const nlohmann::json trace = chrome_trace_json(r.events, r.lanes, {"predicted", "measured"});
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "baton_sim_trace.json").string();
  write_chrome_trace(path, trace);
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json back = nlohmann::json::parse(text.str());
  EXPECT_EQ(back, trace);
  int process_names = 0;
  for (const nlohmann::json& e : back.at("traceEvents")) {
    if (e.at("name") == "process_name") ++process_names;
  }
  EXPECT_EQ(process_names, 2);
  std::filesystem::remove(path);
}

TEST(ChromeTraceTest, RejectsNegativeDurationsAndNonTraces) {
  TraceEvent bad;
  bad.name = "F0";
  bad.duration_us = -1;
  EXPECT_ERROR_MENTIONS("non-negative duration", chrome_trace_json({bad}, {}, {"predicted"}));
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "baton_not_a_trace.json").string();
  EXPECT_ERROR_MENTIONS("traceEvents", write_chrome_trace(path, nlohmann::json::array()));
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace baton::parallel
