// The flag table of `baton train` (tools/train_flags.h): every row names a field the config file
// has and a flag of its own, and the flags given land in the fields their rows name.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runtime/train/optimizer.h"
#include "tools/train_flags.h"

namespace baton::cli {
namespace {

// The config file's JSON pointer of a row's field: "lr_schedule.base_lr" -> "/lr_schedule/base_lr".
nlohmann::json::json_pointer pointer_of(const std::string& field) {
  std::string pointer = "/" + field;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  return nlohmann::json::json_pointer(pointer);
}

nlohmann::json file_of(const TrainSettings& s) {
  nlohmann::json file = s.train.to_json();
  file["parallel"] = s.parallel.to_json();
  return file;
}

TEST(TrainFlagTable, EveryRowNamesAFieldOfTheConfigFileAndAFlagOfItsOwn) {
  const nlohmann::json file = file_of({});
  std::set<std::string> flags;
  for (const TrainFlag& row : train_flags()) {
    // A key of an object field (the schedule's warmup_steps) need not be in the defaults: its object is.
    const bool parallel = row.scope != FlagScope::train;
    const std::string field = parallel ? row.field : row.field.substr(0, row.field.find('.'));
    EXPECT_EQ(parallel, row.field.starts_with("parallel.")) << row.flag();
    EXPECT_TRUE(file.contains(pointer_of(field))) << row.flag() << ": " << row.field;
    EXPECT_TRUE(flags.insert(row.flag()).second) << row.flag() << " twice";
    // A parallel field changed on resume is taken or warned about (the checkpoint holds the whole model),
    // refused only where model averaging's state is tied to it; refuse_if_averaging is for parallel rows.
    EXPECT_TRUE(row.on_resume != OnResume::refuse || !parallel) << row.flag();
    EXPECT_TRUE(row.on_resume != OnResume::refuse_if_averaging || parallel) << row.flag();
  }
}

TEST(TrainFlagTable, TheFlagsGivenLandInTheirRowsFields) {
  CLI::App app;
  add_train_flags(app);
  app.parse(
      "--optimizer adamw --lr 0.5 --no-augment --no-channels-last --stages 2 --schedule gpipe "
      "--block-momentum 0.25 --device cpu",
      false);
  TrainSettings settings;
  settings.parallel.devices = "cpu:0,cpu:1";  // from a config file: --device drops it
  apply_given_flags(app, settings);
  const nlohmann::json file = file_of(settings);
  EXPECT_EQ(file.at(pointer_of("optimizer")), (nlohmann::json{{"type", "adamw"}}));  // another type: its defaults
  EXPECT_EQ(file.at(pointer_of("lr_schedule.base_lr")), 0.5);
  EXPECT_EQ(file.at(pointer_of("augment")), false);
  EXPECT_EQ(file.at(pointer_of("channels_last")), false);
  EXPECT_EQ(file.at(pointer_of("parallel.stages")), 2);
  EXPECT_EQ(file.at(pointer_of("parallel.schedule")), "gpipe");
  EXPECT_EQ(file.at(pointer_of("parallel.block_momentum")), 0.25);
  EXPECT_EQ(file.at(pointer_of("parallel.devices")), "");
  EXPECT_TRUE(given_flag_of(app, FlagScope::parallel));
  EXPECT_TRUE(given_flag_of(app, FlagScope::averaging));
  EXPECT_FALSE(given(app, "--seed"));
}

// Plain SGD from the command line: --momentum 0 --no-nesterov (Nesterov momentum is the default).
TEST(TrainFlagTable, NoNesterovAndMomentumZeroArePlainSgd) {
  CLI::App app;
  add_train_flags(app);
  app.parse("--momentum 0 --no-nesterov", false);
  TrainSettings settings;
  apply_given_flags(app, settings);
  const nlohmann::json file = file_of(settings);
  EXPECT_EQ(file.at(pointer_of("optimizer.momentum")), 0.0);
  EXPECT_EQ(file.at(pointer_of("optimizer.nesterov")), false);
  EXPECT_NO_THROW(check_optimizer_config(settings.train.optimizer, "optimizer"));
}

TEST(TrainFlagTable, AChoiceNobodyKnowsIsOneErrorNamingTheFlagAndTheNames) {
  CLI::App app;
  add_train_flags(app);
  app.parse("--grad-sync sometimes", false);
  TrainSettings settings;
  try {
    apply_given_flags(app, settings);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "--grad-sync: unknown gradient synchronisation 'sometimes' (expected bucket or partition)");
  }
}

}  // namespace
}  // namespace baton::cli
