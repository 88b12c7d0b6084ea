// A plan file checked against the run: the model (fingerprint, node names, the split), the batch and
// the devices (see plan_file.h).
#include <unordered_map>

#include "parallel/plan/plan_file.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

std::string stage_field(size_t stage) { return "stages[" + std::to_string(stage) + "].nodes"; }

// Stage index of every node of `structure`, from the file's node names.
std::vector<int> stages_of_nodes(const PlanFile& file, const Profile& structure) {
  std::unordered_map<std::string, int> index;
  for (int n = 0; n < structure.num_nodes(); ++n) index[structure.nodes[static_cast<size_t>(n)].name] = n;
  std::vector<int> stage_of(structure.nodes.size(), -1);
  for (size_t s = 0; s < file.stages.size(); ++s) {
    for (const std::string& name : file.stages[s].nodes) {
      const auto it = index.find(name);
      BATON_CHECK(it != index.end(), file.path, ": field '", stage_field(s), "': expected names of the nodes of ",
                  structure.model, "; '", name, "' is not one");
      int& stage = stage_of[static_cast<size_t>(it->second)];
      BATON_CHECK(stage < 0, file.path, ": field '", stage_field(s), "': expected each node in one stage; '", name,
                  "' is in stages ", stage, " and ", s);
      stage = static_cast<int>(s);
    }
  }
  for (size_t n = 0; n < stage_of.size(); ++n) {
    BATON_CHECK(stage_of[n] >= 0, file.path, ": field 'stages': expected every node of ", structure.model,
                " in a stage; '", structure.nodes[n].name, "' is in none");
  }
  return stage_of;
}

}  // namespace

Plan plan_of_file(const PlanFile& file, const Profile& structure, int64_t batch) {
  const std::string fingerprint = graph_fingerprint(structure);
  BATON_CHECK(file.model_fingerprint == fingerprint, file.path, ": field 'model_fingerprint' is ",
              file.model_fingerprint, " (", file.model, "), expected ", fingerprint, ", the graph being trained (",
              structure.model, "): the plan was made for another model or model size");
  BATON_CHECK(file.batch == batch, file.path, ": field 'batch' is ", file.batch, ", expected ", batch,
              ", the batch being trained (--batch-size)");
  const std::vector<int> stage_of = stages_of_nodes(file, structure);
  // Stages in pipeline order: every value flows from a stage to itself or a later one, so that no
  // stage's nodes are split by another stage (a stage is convex in the graph).
  for (const ProfiledValue& v : structure.values) {
    if (v.producer < 0) continue;
    const int from = stage_of[static_cast<size_t>(v.producer)];
    for (int c : v.consumers) {
      const int to = stage_of[static_cast<size_t>(c)];
      BATON_CHECK(to >= from, file.path, ": field '", stage_field(static_cast<size_t>(to)),
                  "': expected stages in the order the graph runs (each stage reading only itself and earlier "
                  "stages); '",
                  structure.nodes[static_cast<size_t>(c)].name, "' reads '", v.name, "' from stage ", from);
    }
  }
  Plan plan;
  plan.model = file.model;
  plan.partitioner = file.partitioner;
  plan.batch = file.batch;
  plan.micro_batches = file.step_micro_batches;
  plan.chunks_per_device = file.chunks_per_device;
  plan.stages.resize(file.stages.size());
  for (int n = 0; n < structure.num_nodes(); ++n) plan.stages[static_cast<size_t>(stage_of[n])].nodes.push_back(n);
  for (size_t s = 0; s < file.stages.size(); ++s) {
    plan.stages[s].replicas = file.stages[s].replicas;
    plan.stages[s].devices = file.stages[s].devices;
  }
  try {
    validate_plan(plan, structure);  // what the checks above and read_plan_file leave is a bug here
  } catch (const Error& e) {
    BATON_FAIL(file.path, ": ", e.what());
  }
  return plan;
}

std::vector<Device> plan_file_devices(const PlanFile& file, bool processes) {
  std::vector<Device> out;
  for (size_t i = 0; i < file.devices.size(); ++i) {
    const std::string field = "devices[" + std::to_string(i) + "]";
    try {
      out.push_back(Device::parse(file.devices[i]));
    } catch (const Error& e) {
      BATON_FAIL(file.path, ": field '", field, "': expected a device name such as cpu:0 or cuda:0 (", e.what(), ")");
    }
    BATON_CHECK(out[i].is_cuda() == out.front().is_cuda(), file.path, ": field '", field,
                "': expected every device a CPU device or every one a GPU, like ", file.devices.front(), "; got ",
                file.devices[i]);
  }
  for (size_t i = 0; i < out.size() && !processes; ++i) {
    try {
      check_device(out[i]);
    } catch (const Error& e) {
      BATON_FAIL(file.path, ": field 'devices[", i, "]': expected a device of this machine (", e.what(), ")");
    }
  }
  return out;
}

}  // namespace baton::parallel
