// Names and parsing of the parallel choices (see parallel_choices.h).
#include "parallel/parallel_choices.h"

#include <array>
#include <optional>

#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

// Each choice's names, in the order of its enum's values.
constexpr std::array<std::string_view, 4> kPartitionerNames = {"uniform", "block", "antichain", "hypergraph"};
constexpr std::array<std::string_view, 2> kUnusedParametersNames = {"error", "ready"};
constexpr std::array<std::string_view, 2> kReplicationNames = {"equal", "free"};

// The value whose name is `name`, if one is.
template <class Kind, size_t N>
std::optional<Kind> named(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view partitioner_name(PartitionerKind kind) { return kPartitionerNames.at(static_cast<size_t>(kind)); }

PartitionerKind parse_partitioner(std::string_view name) {
  const std::optional<PartitionerKind> kind = named<PartitionerKind>(kPartitionerNames, name);
  BATON_CHECK(kind, "--partitioner is '", name, "', expected uniform, block, antichain or hypergraph");
  return *kind;
}

std::string_view unused_parameters_name(UnusedParameters kind) {
  return kUnusedParametersNames.at(static_cast<size_t>(kind));
}

UnusedParameters parse_unused_parameters(std::string_view name) {
  const std::optional<UnusedParameters> kind = named<UnusedParameters>(kUnusedParametersNames, name);
  BATON_CHECK(kind, "--unused-parameters is '", name, "', expected 'error' or 'ready'");
  return *kind;
}

std::string_view replication_name(Replication kind) { return kReplicationNames.at(static_cast<size_t>(kind)); }

Replication parse_replication(std::string_view name) {
  const std::optional<Replication> kind = named<Replication>(kReplicationNames, name);
  BATON_CHECK(kind, "--replication is '", name, "', expected 'equal' or 'free'");
  return *kind;
}

}  // namespace baton::parallel
