// Plan checks, device assignment, the stage graph and JSON.
#include "parallel/plan/plan.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {
namespace {

// stage index of every node (-1: in none).
std::vector<int> stage_of_nodes(const Plan& plan, const Profile& profile) {
  std::vector<int> stage_of(profile.nodes.size(), -1);
  for (int s = 0; s < plan.num_stages(); ++s) {
    for (int n : plan.stages[s].nodes) {
      if (n >= 0 && n < profile.num_nodes()) stage_of[n] = s;
    }
  }
  return stage_of;
}

}  // namespace

int Plan::num_devices() const {
  std::set<int> devices;
  for (const Stage& s : stages) devices.insert(s.devices.begin(), s.devices.end());
  return static_cast<int>(devices.size());
}

std::vector<std::vector<int>> stage_consumers(const Plan& plan, const Profile& profile) {
  const std::vector<int> stage_of = stage_of_nodes(plan, profile);
  std::vector<std::set<int>> consumers(plan.stages.size());
  for (const ProfiledValue& v : profile.values) {
    if (v.producer < 0) continue;
    for (int c : v.consumers) {
      if (stage_of[c] != stage_of[v.producer]) consumers[stage_of[v.producer]].insert(stage_of[c]);
    }
  }
  std::vector<std::vector<int>> out;
  for (const std::set<int>& c : consumers) out.emplace_back(c.begin(), c.end());
  return out;
}

void validate_plan(const Plan& plan, const Profile& profile) {
  BATON_CHECK(!plan.stages.empty(), "plan: no stages");
  BATON_CHECK(plan.batch >= 1, "plan: batch must be >= 1 (got ", plan.batch, ")");
  BATON_CHECK(plan.micro_batches >= 1, "plan: micro_batches must be >= 1 (got ", plan.micro_batches, ")");
  BATON_CHECK(plan.batch % plan.micro_batches == 0, "plan: the batch (", plan.batch,
              ") must be divisible by the number of micro-batches (", plan.micro_batches, ")");
  BATON_CHECK(plan.chunks_per_device >= 1 && plan.num_stages() % plan.chunks_per_device == 0,
              "plan: ", plan.num_stages(), " stages cannot be spread as ", plan.chunks_per_device,
              " chunks per device");
  std::vector<int> stage_of(profile.nodes.size(), -1);
  for (int s = 0; s < plan.num_stages(); ++s) {
    const Stage& st = plan.stages[s];
    BATON_CHECK(!st.nodes.empty(), "plan: stage ", s, " is empty");
    BATON_CHECK(st.replicas >= 1, "plan: stage ", s, " has ", st.replicas, " replicas (expected >= 1)");
    BATON_CHECK(static_cast<int>(st.devices.size()) == st.replicas, "plan: stage ", s, " has ", st.replicas,
                " replicas but ", st.devices.size(), " devices");
    BATON_CHECK(plan.micro_batches % st.replicas == 0, "plan: stage ", s, " has ", st.replicas,
                " replicas, which take whole micro-batches in turn: the ", plan.micro_batches,
                " micro-batches of a step must be a multiple of ", st.replicas);
    for (int n : st.nodes) {
      BATON_CHECK(n >= 0 && n < profile.num_nodes(), "plan: stage ", s, " names node ", n, ", which does not exist");
      BATON_CHECK(stage_of[n] < 0, "plan: node '", profile.nodes[n].name, "' is in stages ", stage_of[n], " and ", s);
      stage_of[n] = s;
    }
  }
  for (int n = 0; n < profile.num_nodes(); ++n) {
    BATON_CHECK(stage_of[n] >= 0, "plan: node '", profile.nodes[n].name, "' is in no stage");
  }
  for (const ProfiledValue& v : profile.values) {
    if (v.producer < 0) continue;
    for (int c : v.consumers) {
      BATON_CHECK(stage_of[c] >= stage_of[v.producer], "plan: value '", v.name, "' flows backwards from stage ",
                  stage_of[v.producer], " ('", profile.nodes[v.producer].name, "') to stage ", stage_of[c], " ('",
                  profile.nodes[c].name, "')");
    }
  }
}

bool unequal_replication(const Plan& plan) {
  return std::any_of(plan.stages.begin(), plan.stages.end(),
                     [&](const Stage& s) { return s.replicas != plan.stages.front().replicas; });
}

void assign_devices(Plan& plan) {
  BATON_CHECK(plan.chunks_per_device >= 1 && !plan.stages.empty() && plan.num_stages() % plan.chunks_per_device == 0,
              "plan: ", plan.num_stages(), " stages cannot be spread as ", plan.chunks_per_device,
              " chunks per device");
  const int positions = plan.num_stages() / plan.chunks_per_device;
  const int replicas = plan.stages.front().replicas;
  const bool uniform =
      std::all_of(plan.stages.begin(), plan.stages.end(), [&](const Stage& s) { return s.replicas == replicas; });
  BATON_CHECK(uniform || plan.chunks_per_device == 1,
              "plan: interleaved stages need the same number of replicas on every stage");
  int next = 0;
  for (int k = 0; k < plan.num_stages(); ++k) {
    Stage& s = plan.stages[k];
    s.devices.clear();
    for (int r = 0; r < s.replicas; ++r) s.devices.push_back(uniform ? r * positions + k % positions : next++);
  }
}

nlohmann::json plan_to_json(const Plan& plan, const Profile& profile) {
  nlohmann::json stages = nlohmann::json::array();
  for (const Stage& s : plan.stages) {
    nlohmann::json names = nlohmann::json::array();
    for (int n : s.nodes) names.push_back(profile.nodes[n].name);
    stages.push_back({{"nodes", names}, {"replicas", s.replicas}, {"devices", s.devices}});
  }
  return {{"format", "baton.plan/2"},
          {"model", plan.model},
          {"partitioner", plan.partitioner},
          {"batch", plan.batch},
          {"micro_batches", plan.micro_batches},
          {"chunks_per_device", plan.chunks_per_device},
          {"stages", stages}};
}

Plan plan_from_json(const nlohmann::json& json, const Profile& profile, std::string_view source) {
  const JsonFields f(json, source, "");
  f.allow_only({"format", "model", "partitioner", "batch", "micro_batches", "chunks_per_device", "stages"});
  const std::string format = f.string("format");
  if (format != "baton.plan/2" && format != "baton.plan/1") f.fail("format", "\"baton.plan/2\" (or /1)");
  std::unordered_map<std::string, int> index;
  for (int n = 0; n < profile.num_nodes(); ++n) index[profile.nodes[n].name] = n;
  Plan plan;
  plan.model = f.string("model", "");
  plan.partitioner = f.string("partitioner", "");
  plan.batch = f.int32("batch");
  plan.micro_batches = f.int32("micro_batches", 1);
  plan.chunks_per_device = f.int32("chunks_per_device", 1);
  for (const JsonFields& s : f.objects("stages")) {
    s.allow_only({"nodes", "replicas", "devices"});
    Stage stage;
    for (const std::string& name : s.strings("nodes")) {
      auto it = index.find(name);
      if (it == index.end()) s.fail("nodes", "names of nodes of the profile ('" + name + "' is not one)");
      stage.nodes.push_back(it->second);
    }
    std::sort(stage.nodes.begin(), stage.nodes.end());
    stage.replicas = s.int32("replicas", 1);
    stage.devices = s.int32s("devices");
    plan.stages.push_back(std::move(stage));
  }
  if (format == "baton.plan/1" && !plan.stages.empty()) {
    // Version 1 split each micro-batch over a stage's replicas: with G everywhere, the same work is
    // G x the micro-batches, each replica taking whole ones.
    const int groups = plan.stages.front().replicas;
    for (const Stage& stage : plan.stages) {
      if (stage.replicas != groups) {
        f.fail("format",
               "\"baton.plan/2\": a baton.plan/1 plan with unequal replicas split each micro-batch over "
               "a stage's replicas, which baton no longer runs (replicas take whole micro-batches); plan "
               "again");
      }
    }
    plan.micro_batches *= groups;
  }
  try {
    validate_plan(plan, profile);
  } catch (const Error& e) {
    BATON_FAIL(source, ": ", e.what());
  }
  return plan;
}

}  // namespace baton::parallel
