// The plan the plan-file tests write: ResNet-20 (batch 8, 32x32 images) with an analytic H200 profile,
// split as 2 groups of a 2-stage pipeline, 2 micro-batches per group.
#pragma once

#include "models/model_registry.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/plan_file.h"

namespace baton::parallel::fixtures {

inline Graph resnet20_graph(int classes = 10) {
  models::ModelOptions o;
  o.batch_size = 8;
  o.num_classes = classes;
  o.image_size = 32;
  o.with_loss = true;
  return models::build_model("resnet20", o);
}

struct PlannedModel {
  Graph graph = resnet20_graph();
  Profile profile;
  Cluster cluster = cluster_by_name("h200-nvlink-8");
  EvaluatedPlan planned;

  PlannedModel() {
    AnalyticOptions o;
    o.batch_sizes = {1, 2, 4, 8};
    profile = analytic_profile(graph, "resnet20", device_spec_by_name("h200"), o);
    PlanChoice c;
    c.groups = 2;
    c.stages = 2;
    c.micro_batches = 2;
    PlanSettings settings;
    settings.batch = 8;
    planned = evaluate_plan(c, profile, cluster, settings);
  }
  // Its plan file, asking for `grad_sync`.
  nlohmann::json plan_file(const char* grad_sync = "partition") const {
    return plan_file_json(planned, profile, cluster, 1.0, grad_sync);
  }
};

}  // namespace baton::parallel::fixtures
