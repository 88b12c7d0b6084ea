// Plan files read: the fields a run needs, of the right types and counts, and consistent with each
// other and with the cluster they were predicted on (see plan_file.h).
#include <algorithm>

#include "parallel/plan/plan_file.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {

bool PlanFile::unequal_replication() const {
  return std::any_of(stages.begin(), stages.end(),
                     [&](const PlanFileStage& s) { return s.replicas != stages.front().replicas; });
}

int PlanFile::groups() const { return unequal_replication() ? 1 : stages.front().replicas; }

int PlanFile::positions() const { return static_cast<int>(stages.size()) / chunks_per_device; }

int PlanFile::units() const {
  int units = 0;
  for (const PlanFileStage& s : stages) units += s.replicas;
  return units;
}

namespace {

PlanFileStage read_stage(const JsonFields& s, const PlanFile& file) {
  s.allow_only({"nodes", "replicas", "devices", "fwd_ms", "bwd_ms", "param_bytes", "boundary_bytes", "memory_bytes",
                "in_flight"});
  PlanFileStage stage;
  stage.nodes = s.strings("nodes");
  if (stage.nodes.empty()) s.fail("nodes", "the names of the stage's nodes (a stage has at least one)");
  stage.replicas = s.int32("replicas");
  if (stage.replicas < 1) s.fail("replicas", "a count >= 1");
  if (file.step_micro_batches % stage.replicas != 0) {
    s.fail("replicas", "a count dividing the step's " + std::to_string(file.step_micro_batches) +
                           " micro-batches (replicas take whole micro-batches in turn), not " +
                           std::to_string(stage.replicas));
  }
  stage.devices = s.int32s("devices");
  if (static_cast<int>(stage.devices.size()) != stage.replicas) {
    s.fail("devices", "one device per replica: " + std::to_string(stage.replicas) + " indices into 'devices', not " +
                          std::to_string(stage.devices.size()));
  }
  for (int d : stage.devices) {
    if (d < 0 || d >= static_cast<int>(file.devices.size())) {
      s.fail("devices", "indices into 'devices' (0.." + std::to_string(file.devices.size() - 1) + "); " +
                            std::to_string(d) + " is not one");
    }
    if (d >= file.cluster.num_devices()) {
      s.fail("devices", "devices of the cluster the plan is predicted on ('" + file.cluster.name() + "' has " +
                            std::to_string(file.cluster.num_devices()) + "); " + std::to_string(d) + " is not one");
    }
  }
  return stage;
}

}  // namespace

PlanFile read_plan_file(const std::string& path) {
  const nlohmann::json json = read_json_file(path, "plan file");
  const JsonFields f(json, path, "");
  f.allow_only({"format", "model", "model_fingerprint", "profile", "partitioner", "groups", "stages_per_group",
                "chunks_per_device", "batch", "micro_batches", "step_micro_batches", "schedule", "grad_sync", "devices",
                "nodes", "stages", "predicted", "planned_with", "ranking"});
  PlanFile file;
  file.path = path;
  if (f.string("format") != kPlanFileFormat) {
    f.fail("format", "\"" + std::string(kPlanFileFormat) + "\" (a plan file from `baton plan --json FILE`)");
  }
  file.model = f.string("model");
  file.model_fingerprint = f.string("model_fingerprint");
  file.partitioner = f.string("partitioner", "");
  file.batch = f.int32("batch");
  if (file.batch < 1) f.fail("batch", "the global batch, >= 1");
  file.step_micro_batches = f.int32("step_micro_batches");
  if (file.step_micro_batches < 1 || file.batch % file.step_micro_batches != 0) {
    f.fail("step_micro_batches", "a count dividing the batch of " + std::to_string(file.batch) + ", not " +
                                     std::to_string(file.step_micro_batches));
  }
  file.chunks_per_device = f.int32("chunks_per_device", 1);
  try {
    file.schedule = parse_schedule_kind(f.string("schedule"));
  } catch (const Error&) {
    f.fail("schedule", "gpipe, 1f1b or interleaved");
  }
  file.grad_sync = f.string("grad_sync", "bucket");
  if (file.grad_sync != "bucket" && file.grad_sync != "partition") f.fail("grad_sync", "bucket or partition");
  file.devices = f.strings("devices");
  if (file.devices.empty()) f.fail("devices", "the names of the devices the stages run on, e.g. [\"cpu:0\"]");
  file.predicted_step_ms = f.object("predicted").non_negative("step_ms");
  const JsonFields planned = f.object("planned_with");
  planned.allow_only({"profile", "cluster"});
  file.profile = profile_from_json(planned.at("profile"), path + " (field 'planned_with.profile')");
  file.cluster = cluster_from_json(planned.at("cluster"), path + " (field 'planned_with.cluster')");
  if (graph_fingerprint(file.profile) != file.model_fingerprint) {
    f.fail("planned_with",
           "the profile of the model 'model_fingerprint' names (edit a plan's stages, devices and "
           "counts, not what it was planned with)");
  }
  for (const JsonFields& s : f.objects("stages")) file.stages.push_back(read_stage(s, file));
  if (file.stages.empty()) f.fail("stages", "at least one stage");
  const int stages = static_cast<int>(file.stages.size());
  if (file.chunks_per_device < 1 || stages % file.chunks_per_device != 0) {
    f.fail("chunks_per_device", "a count dividing the " + std::to_string(stages) + " stages");
  }
  if (file.chunks_per_device > 1 && file.unequal_replication()) {
    f.fail("chunks_per_device", "1 where stages have unequal replicas (interleaving needs the same on every stage)");
  }
  // The report's micro_batches counts one of its groups' (with free replication: the step's).
  const int groups = std::max(1, f.int32("groups", 1));
  if (f.int32("micro_batches") * groups != file.step_micro_batches) {
    f.fail("micro_batches", std::to_string(file.step_micro_batches / groups) + ", the step's " +
                                std::to_string(file.step_micro_batches) + " micro-batches over " +
                                std::to_string(groups) +
                                " group(s) ('step_micro_batches' is the step's count: edit both)");
  }
  file.micro_batches = file.step_micro_batches / file.groups();
  return file;
}

}  // namespace baton::parallel
