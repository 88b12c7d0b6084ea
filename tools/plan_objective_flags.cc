// `baton plan`: a flag the chosen objective or profile does not read is refused, naming it and the reason.
#include "tools/plan_objective_flags.h"

#include "runtime/core/error.h"
#include "tools/plan_pipedream.h"

namespace baton::cli {
namespace {

struct FlagReason {
  const char* flag;
  const char* reason;
};

constexpr const char* kStagesChosen =
    "PipeDream's optimiser chooses the stages and their replicas itself (--stages and --groups belong to baton's "
    "objective)";
constexpr const char* kNoSchedule =
    "PipeDream's objective prices whole mini-batches, with no micro-batch schedule (--micro-batches, --schedule and "
    "--chunks belong to baton's objective)";

// Flags of baton's objective that PipeDream's optimiser has no counterpart for.
constexpr FlagReason kBatonObjectiveOnly[] = {
    {"--stages", kStagesChosen},
    {"--groups", kStagesChosen},
    {"--micro-batches", kNoSchedule},
    {"--schedule", kNoSchedule},
    {"--chunks", kNoSchedule},
    {"--partitioner",
     "PipeDream's optimiser searches its own antichain states (--partitioner belongs to baton's "
     "objective)"},
    {"--replication",
     "PipeDream's optimiser replicates each stage freely; --straight-pipeline gives every stage one "
     "worker (--replication belongs to baton's objective)"},
    {"--search", "PipeDream's optimiser returns its one optimum (--search ranks baton's layouts)"},
    {"--trace", "PipeDream's objective simulates no timeline (--trace belongs to baton's objective)"},
    {"--bucket-mb",
     "PipeDream's objective prices each stage's all-reduce whole (--bucket-mb belongs to baton's "
     "objective)"},
    {"--grad-sync",
     "PipeDream's optimum is printed, not written as a plan file (--grad-sync belongs to baton's "
     "objective)"},
};

// Flags of PipeDream's objective that baton's objective has no use for.
constexpr FlagReason kPipeDreamObjectiveOnly[] = {
    {"--bandwidth-gbs", "baton's objective takes the bandwidth of every link from --cluster"},
    {"--activation-compression-ratio", "baton's objective costs every activation transfer on --cluster's links"},
    {"--straight-pipeline", "under baton's objective a plan without --groups is a straight pipeline already"},
};

// --search tries every partitioner, schedule and micro-batch count itself.
constexpr const char* kSearchChooses[] = {"--partitioner", "--schedule", "--chunks", "--micro-batches"};

// With --profile (either objective) the profile gives the model and its times.
constexpr const char* kModelFlags[] = {"--model", "--model-spec", "--classes", "--input", "--device-spec"};

}  // namespace

std::set<std::string> flags_given(const CLI::App& command) {
  std::set<std::string> given;
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() == 0) continue;
    for (const std::string& name : option->get_lnames()) given.insert("--" + name);
  }
  return given;
}

void check_plan_objective_flags(const std::string& objective, const std::set<std::string>& given,
                                const std::string& profile_path, const std::string& schedule) {
  if (!profile_path.empty()) {
    for (const char* flag : kModelFlags)
      BATON_CHECK(given.count(flag) == 0, flag,
                  " does not go with --profile: the profile already gives the model and "
                  "its times");
  }
  if (objective != "pipedream") {
    for (const FlagReason& f : kPipeDreamObjectiveOnly)
      BATON_CHECK(given.count(f.flag) == 0, f.flag, " belongs to --objective pipedream: ", f.reason);
    if (given.count("--search") > 0) {
      for (const char* flag : kSearchChooses)
        BATON_CHECK(given.count(flag) == 0, "--search does not take ", flag,
                    ": it tries every partitioner, schedule, chunk count and micro-batch count itself");
    }
    BATON_CHECK(given.count("--chunks") == 0 || schedule == "interleaved",
                "--chunks is read only with --schedule interleaved (stages per device), not with --schedule ",
                schedule);
    return;
  }
  for (const FlagReason& f : kBatonObjectiveOnly)
    BATON_CHECK(given.count(f.flag) == 0, "--objective pipedream does not take ", f.flag, ": ", f.reason);
  if (profile_path.empty()) return;
  BATON_CHECK(given.count("--cluster") == 0,
              "--objective pipedream does not take --cluster with --profile: the times are the profile's and the "
              "links' bandwidth is --bandwidth-gbs (--cluster prices only --model's analytic profile)");
  BATON_CHECK(!is_pipedream_profile(profile_path) || given.count("--batch") == 0,
              "--objective pipedream does not take --batch with --profile pipedream:FILE: PipeDream's optimiser "
              "prices the graph.txt at the mini-batch it was profiled at");
}

}  // namespace baton::cli
