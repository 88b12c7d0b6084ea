// Resuming a run (--resume DIR, or "resume": true with "checkpoint_dir"): which checkpoint it
// continues, and the settings restored from it, overridden only where that is safe. See
// docs/training.md ("Resuming").
#pragma once

#include <optional>
#include <string>

#include "tools/train_flags.h"

namespace baton::cli {

struct ResumePoint {
  std::string root;                       // the run's checkpoint directory (new checkpoints go there)
  std::optional<std::string> checkpoint;  // the one to continue; none: no checkpoint yet, a new run
  std::string warning;                    // a line to print: newer step-… directories are incomplete and passed over
};

// DIR is a checkpoint directory (its newest complete step-… is continued) or one of its step-…
// directories, which must then be the newest. A missing or empty DIR has no checkpoint yet. Errors
// instead of starting from scratch over something: a step-… directory that is incomplete, or not
// the newest; a DIR with incomplete checkpoints only, or with files but no checkpoint.
ResumePoint find_resume_point(const std::string& dir);

// The settings a checkpoint's run was started with (its stored train config), minus what only
// described that start (weights, resume; the trace file of its parallel settings).
struct StoredSettings {
  TrainConfig train;
  std::optional<parallel::ParallelConfig> parallel;  // none: a checkpoint from before they were stored
};
StoredSettings stored_settings(const std::string& checkpoint);

// The parallel settings as a run stores them in its checkpoints (TrainConfig::parallel): the config
// file's "parallel" object without the trace file (that run's output, not its layout).
nlohmann::json parallel_to_store(const parallel::ParallelConfig& parallel);

// `requested` (the stored settings with the config file and flags over them) against `stored`, by the
// rules of the flag table (train_flags.h; parallel rows only when the checkpoint stores its parallel
// settings): a field of a row marked OnResume::refuse (model, model spec, data, batch size, seed,
// optimiser type; with model averaging on both sides, its variant, replicas and meetings) that
// differs is an error naming the field, both values and what to do instead; one marked
// OnResume::warn (the learning-rate schedule, optimiser settings, label smoothing, augmentation,
// tf32, channels-last, the layout: stages, groups, replicas, micro-batches, ...) a warning line each
// (returned, for the caller to print).
std::string check_resume_overrides(const StoredSettings& stored, const TrainSettings& requested,
                                   const std::string& checkpoint);

}  // namespace baton::cli
