// PipelineRouting: how the stages of a plan connect, built once with the executor and never changed
// after: where each stage input comes from (the batch, or the stage that computes it), the values
// each link carries (skip links included: a value may go from a stage straight to any later stage),
// each link's streams, which stage computes each graph output, and where the loss is.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "parallel/pipeline/stage.h"
#include "parallel/pipeline/transfer.h"
#include "parallel/plan/plan.h"
#include "runtime/graph/graph.h"

namespace baton::parallel {

// Where one of a stage's executor inputs comes from.
struct StageInput {
  int graph_input = -1;     // index in graph.inputs() (data, labels), or -1
  int producer_stage = -1;  // the stage that computes it otherwise
};

// One value a link carries: its index among the sender's executor outputs and among the receiver's
// executor inputs. Gradients travel the same link backwards.
struct LinkValue {
  size_t output = 0;
  size_t input = 0;
};

// A graph output a stage computes: its index in graph.outputs() and among the stage's outputs.
struct GraphOutputSource {
  size_t graph_output = 0;
  size_t stage_output = 0;
};

// One stage as the routing sees it: its boundary values (the executor's inputs and outputs) and, when
// this process runs it, its device.
struct StageEnds {
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::optional<Device> device;  // unset: another process runs the stage
};

// Every stage's boundary values, and its device where this process runs it (`stages[s]` not null).
std::vector<StageEnds> stage_ends(const Graph& graph, const Plan& plan,
                                  const std::vector<std::unique_ptr<PipelineStage>>& stages);

class PipelineRouting {
 public:
  // `consumers[s]`: the later stages that read stage s's outputs, as the plan says
  // (stage_consumers); checked against the stages' boundary values. Links between two stages of
  // this process get their streams; a link to a stage of another process goes through the
  // pipeline's communicator instead (remote_transfer.h).
  PipelineRouting(const Graph& graph, std::vector<StageEnds> stages, std::vector<std::vector<int>> consumers);

  // Replicated stages: the same routing over units, unit u being one replica of stage unit_stage[u],
  // on unit_devices[u] (across processes, one unit per process). Unit u is linked to every unit of the stages its stage
  // feeds (each micro-batch goes to the one that takes it), consumer and producer counts stay those
  // of the stages (one send per micro-batch and consumer stage), graph outputs come from the first
  // unit of their stage, and every unit of the loss stage computes the loss of its micro-batches.
  // `unit_devices[u]`: unit u's device where this process runs it, empty for another process's.
  PipelineRouting over_units(const std::vector<int>& unit_stage,
                             const std::vector<std::optional<Device>>& unit_devices) const;

  int num_stages() const { return static_cast<int>(sources_.size()); }
  // Whether this process runs the stage (always, unless the pipeline spans processes).
  bool local(int stage) const { return local_.at(static_cast<size_t>(stage)); }
  const std::vector<std::vector<int>>& consumers() const { return consumers_; }
  const std::vector<StageInput>& sources(int stage) const { return sources_.at(static_cast<size_t>(stage)); }
  // The values stage `from` sends stage `to` (empty: they are not linked).
  const std::vector<LinkValue>& link(int from, int to) const;
  bool linked(int from, int to) const { return !link(from, to).empty(); }
  // Streams of the directed link from -> to (activations forwards, gradients backwards).
  const LinkStreams& streams(int from, int to) const;
  int consumer_count(int stage) const;                                // stages that read this one's outputs
  int producer_count(int stage) const;                                // stages whose outputs this one reads
  bool computes_loss(int stage) const;                                // the loss stage (with units: any unit of it)
  const std::vector<int>& loss_units() const { return loss_units_; }  // {loss_stage()} without units

  const std::vector<GraphOutputSource>& graph_outputs(int stage) const {
    return graph_outputs_.at(static_cast<size_t>(stage));
  }
  const std::vector<int>& output_stage() const { return output_stage_; }  // per graph output
  int loss_stage() const { return loss_stage_; }
  size_t loss_output() const { return loss_output_; }  // among the loss stage's outputs

 private:
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> local_;                                    // [stage]
  std::vector<std::vector<StageInput>> sources_;               // [stage][executor input]
  std::vector<std::vector<std::vector<LinkValue>>> links_;     // [from][to]
  std::vector<std::vector<LinkStreams>> streams_;              // [from][to]
  std::vector<std::vector<GraphOutputSource>> graph_outputs_;  // [stage]
  std::vector<int> output_stage_;
  int loss_stage_ = -1;
  size_t loss_output_ = 0;
  std::vector<int> consumer_counts_;  // [stage]
  std::vector<int> producer_counts_;  // [stage]
  std::vector<int> loss_units_;

  PipelineRouting() = default;  // over_units() fills one in
};

}  // namespace baton::parallel
