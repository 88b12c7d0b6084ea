// The choices of a parallel run that ParallelConfig names and partition, schedule, gradient
// synchronisation and model averaging do not already own: the partitioner, what an unused parameter
// is, and the stages' replication. One enum each, its names as flags and config files spell them,
// and one parse whose error names the flag and the accepted names; parse_choice for any choice's flag.
#pragma once

#include <string>
#include <string_view>

#include "runtime/core/error.h"

namespace baton::parallel {

// `name` read by `parse` (this header's parsers, parse_schedule_kind, parse_grad_sync, ...) as the
// value of `flag`: parse's error, naming the flag when it does not already.
template <class Kind>
Kind parse_choice(std::string_view flag, std::string_view name, Kind (*parse)(std::string_view)) {
  try {
    return parse(name);
  } catch (const Error& e) {
    if (e.message().find(flag) != std::string::npos) throw;
    BATON_FAIL(flag, ": ", e.message());
  }
}

enum class PartitionerKind { uniform, block, antichain, hypergraph };
std::string_view partitioner_name(PartitionerKind kind);  // "uniform", "block", "antichain", "hypergraph"
PartitionerKind parse_partitioner(std::string_view name);

// Data parallel: a parameter that gets no gradient in a step.
enum class UnusedParameters {
  error,  // is an error naming it (the default)
  ready,  // is reduced as zeros
};
std::string_view unused_parameters_name(UnusedParameters kind);  // "error", "ready"
UnusedParameters parse_unused_parameters(std::string_view name);

// How many devices each pipeline stage runs on.
enum class Replication {
  equal,  // every stage on `groups` devices (G groups of the pipeline)
  free,   // each stage's replicas chosen by the antichain partitioner within groups x stages devices
};
std::string_view replication_name(Replication kind);  // "equal", "free"
Replication parse_replication(std::string_view name);

}  // namespace baton::parallel
