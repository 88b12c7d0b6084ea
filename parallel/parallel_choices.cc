// Names and parsing of the parallel choices (see parallel_choices.h).
#include "parallel/parallel_choices.h"

#include "runtime/core/error.h"

namespace baton::parallel {

std::string_view partitioner_name(PartitionerKind kind) {
  switch (kind) {
    case PartitionerKind::uniform:
      return "uniform";
    case PartitionerKind::antichain:
      return "antichain";
    case PartitionerKind::hypergraph:
      return "hypergraph";
    case PartitionerKind::block:
      break;
  }
  return "block";
}

PartitionerKind parse_partitioner(std::string_view name) {
  for (PartitionerKind kind :
       {PartitionerKind::uniform, PartitionerKind::block, PartitionerKind::antichain, PartitionerKind::hypergraph}) {
    if (name == partitioner_name(kind)) return kind;
  }
  BATON_FAIL("--partitioner is '", name, "', expected uniform, block, antichain or hypergraph");
}

std::string_view unused_parameters_name(UnusedParameters kind) {
  return kind == UnusedParameters::ready ? "ready" : "error";
}

UnusedParameters parse_unused_parameters(std::string_view name) {
  for (UnusedParameters kind : {UnusedParameters::error, UnusedParameters::ready}) {
    if (name == unused_parameters_name(kind)) return kind;
  }
  BATON_FAIL("--unused-parameters is '", name, "', expected 'error' or 'ready'");
}

std::string_view replication_name(Replication kind) { return kind == Replication::free ? "free" : "equal"; }

Replication parse_replication(std::string_view name) {
  for (Replication kind : {Replication::equal, Replication::free}) {
    if (name == replication_name(kind)) return kind;
  }
  BATON_FAIL("--replication is '", name, "', expected 'equal' or 'free'");
}

}  // namespace baton::parallel
