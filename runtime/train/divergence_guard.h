// DivergenceGuard: a run's divergence check and its record of healthy checkpoints — the baseline
// (the first loss) and the newest healthy checkpoint's step, stored in every checkpoint and carried
// across resumes. See docs/checkpoints.md ("Divergence and healthy checkpoints").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace baton {

// A loss this many times the baseline (the run's first loss, or 1, whichever is larger) means
// training diverged.
inline constexpr double kExplodingLossFactor = 1e4;
// A checkpoint is healthy when every loss from it to the next checkpoint is finite and at most this
// many times the baseline.
inline constexpr double kHealthyLossFactor = 4;

class DivergenceGuard {
 public:
  // After a resume from the checkpoint of `step`: its stored state (CheckpointState::divergence; null
  // for a checkpoint written before it was stored: the baseline is then the first loss resumed and
  // no checkpoint is known healthy). The resumed checkpoint is healthy once the losses after it are.
  void restore(const nlohmann::json& stored, int64_t step, const std::string& where);
  // Checks the loss of (0-based) step `step`: "" when it is within bounds, else why it diverged
  // ("the loss is 1e+11 at step 3, over 10000 times this run's first, 2").
  std::string check(int64_t step, double loss);
  // A checkpoint of `step` is about to be saved: the previous one becomes healthy when the losses
  // since it stayed within kHealthyLossFactor of the baseline; the new one waits for its own.
  void checkpoint_at(int64_t step);
  // What a checkpoint stores: {"first_loss": x, "healthy_step": s}, members known only.
  nlohmann::json to_json() const;
  std::optional<int64_t> healthy_step() const { return healthy_step_; }

 private:
  double baseline() const;

  std::optional<double> first_loss_;
  std::optional<int64_t> healthy_step_;  // the newest checkpoint known healthy
  std::optional<int64_t> candidate_;     // the newest checkpoint, waiting for the losses after it
  bool candidate_clean_ = true;          // its losses so far were within the healthy bound
};

}  // namespace baton
