// TrainConfig JSON reading and validation.
#include "runtime/train/train_config.h"

#include "runtime/core/error.h"
#include "runtime/data/loader.h"
#include "runtime/graph/json_config.h"

namespace baton {

void TrainConfig::update_from_json(const nlohmann::json& j, std::string_view where) {
  const std::string what(where);
  JsonConfig c(j, what,
               {"model",
                "model_spec",
                "data",
                "epochs",
                "steps",
                "batch_size",
                "optimizer",
                "lr_schedule",
                "label_smoothing",
                "device",
                "seed",
                "workers",
                "augment",
                "tf32",
                "channels_last",
                "checkpoint_dir",
                "checkpoint_every",
                "keep_checkpoints",
                "resume",
                "overwrite",
                "weights",
                "eval_every",
                "log_every",
                "metrics"});
  model = c.get_string("model", model);
  model_spec = c.get_string("model_spec", model_spec);
  data = c.get_string("data", data);
  epochs = c.get_int("epochs", epochs);
  steps = c.get_int("steps", steps);
  batch_size = c.get_int("batch_size", batch_size);
  if (c.has("optimizer")) {
    BATON_CHECK(j["optimizer"].is_object(), what, ": field 'optimizer' must be an object such as {\"type\": \"sgd\"}");
    optimizer = j["optimizer"];
  }
  if (c.has("lr_schedule")) {
    BATON_CHECK(j["lr_schedule"].is_object(), what,
                ": field 'lr_schedule' must be an object such as {\"type\": \"cosine\"}");
    lr_schedule = j["lr_schedule"];
  }
  label_smoothing = c.get_double("label_smoothing", label_smoothing);
  device = c.get_string("device", device);
  seed = c.get_non_negative("seed", seed);
  workers = c.get_int32("workers", workers, INT32_MIN);
  augment = c.get_bool("augment", augment);
  tf32 = c.get_bool("tf32", tf32);
  channels_last = c.get_bool("channels_last", channels_last);
  checkpoint_dir = c.get_string("checkpoint_dir", checkpoint_dir);
  checkpoint_every = c.get_int("checkpoint_every", checkpoint_every);
  keep_checkpoints = c.get_int32("keep_checkpoints", keep_checkpoints, INT32_MIN);
  resume = c.get_bool("resume", resume);
  overwrite = c.get_bool("overwrite", overwrite);
  weights = c.get_string("weights", weights);
  eval_every = c.get_int("eval_every", eval_every);
  log_every = c.get_int("log_every", log_every);
  metrics = c.get_string("metrics", metrics);
}

nlohmann::json TrainConfig::to_json() const {
  nlohmann::json j = {{"model", model},
                      {"model_spec", model_spec},
                      {"data", data},
                      {"epochs", epochs},
                      {"steps", steps},
                      {"batch_size", batch_size},
                      {"optimizer", optimizer},
                      {"lr_schedule", lr_schedule},
                      {"label_smoothing", label_smoothing},
                      {"device", device},
                      {"seed", seed},
                      {"workers", workers},
                      {"augment", augment},
                      {"tf32", tf32},
                      {"channels_last", channels_last},
                      {"checkpoint_dir", checkpoint_dir},
                      {"checkpoint_every", checkpoint_every},
                      {"keep_checkpoints", keep_checkpoints},
                      {"resume", resume},
                      {"overwrite", overwrite},
                      {"weights", weights},
                      {"eval_every", eval_every},
                      {"log_every", log_every},
                      {"metrics", metrics}};
  if (!parallel.is_null()) j["parallel"] = parallel;
  return j;
}

int64_t TrainConfig::total_steps(int64_t per_epoch) const {
  if (steps > 0) return steps;
  BATON_CHECK(per_epoch <= 0 || epochs <= INT64_MAX / per_epoch, "--epochs ", epochs, " at ", per_epoch,
              " steps each is more steps than a run can count (at most ", INT64_MAX / per_epoch,
              " epochs of this data and batch size); give fewer epochs or a number of steps (--steps)");
  return epochs * per_epoch;
}

void TrainConfig::validate(std::string_view where) const {
  const std::string w(where);
  BATON_CHECK(!model.empty() || !model_spec.empty(), w, ": give a model or a model_spec");
  BATON_CHECK(epochs >= 1 || steps >= 1, w, ": epochs must be >= 1 (or steps >= 1), got epochs ", epochs);
  BATON_CHECK(steps >= 0, w, ": steps must be >= 0, got ", steps);
  BATON_CHECK(batch_size >= 1, w, ": batch_size must be >= 1, got ", batch_size);
  BATON_CHECK(label_smoothing >= 0 && label_smoothing < 1, w, ": label_smoothing must be in [0, 1), got ",
              label_smoothing);
  BATON_CHECK(workers >= 1 && workers <= data::kMaxLoaderWorkers, w, ": workers must be 1..", data::kMaxLoaderWorkers,
              ", got ", workers);
  BATON_CHECK(checkpoint_every >= 0, w, ": checkpoint_every must be >= 0, got ", checkpoint_every);
  BATON_CHECK(keep_checkpoints >= 1, w, ": keep_checkpoints must be >= 1, got ", keep_checkpoints);
  BATON_CHECK(eval_every >= 0, w, ": eval_every must be >= 0, got ", eval_every);
  BATON_CHECK(log_every >= 1, w, ": log_every must be >= 1, got ", log_every);
  BATON_CHECK(!resume || !checkpoint_dir.empty(), w, ": resume needs checkpoint_dir");
  BATON_CHECK(!overwrite || !resume, w, ": overwrite (--overwrite) replaces the checkpoints of checkpoint_dir with a ",
              "new run and resume (--resume) continues them; give one, not both");
  BATON_CHECK(weights.empty() || !resume, w, ": weights (--weights) start a new run from a file and resume (--resume) ",
              "continues a checkpoint; give one, not both");
}

}  // namespace baton
