// Registering the rows of train_flag_table.cc on `baton train` and applying the flags given.
#include "tools/train_flags.h"

namespace baton::cli {

void add_train_flags(CLI::App& cmd) {
  for (const TrainFlag& row : train_flags()) {
    // A switch given twice, or with its "--no-" name too, is one error like an option given twice.
    CLI::Option* option = row.value.is_switch
                              ? cmd.add_flag(row.names, row.help)->multi_option_policy(CLI::MultiOptionPolicy::Throw)
                              : cmd.add_option(row.names, row.help)->type_name(row.value.type_name);
    if (row.check) option->check(*row.check);
  }
}

bool given(const CLI::App& cmd, const std::string& flag) { return cmd.get_option(flag)->count() > 0; }

void apply_given_flags(const CLI::App& cmd, TrainSettings& settings) {
  for (const TrainFlag& row : train_flags()) {
    if (given(cmd, row.flag())) row.value.apply(settings, *cmd.get_option(row.flag()));
  }
}

bool given_flag_of(const CLI::App& cmd, FlagScope scope) {
  for (const TrainFlag& row : train_flags()) {
    const bool in_scope = row.scope == scope || (scope == FlagScope::parallel && row.scope == FlagScope::averaging);
    if (in_scope && given(cmd, row.flag())) return true;
  }
  return false;
}

bool given_layout_flag(const CLI::App& cmd) {
  for (const char* flag : {"--stages", "--groups", "--data-parallel", "--plan", "--device"}) {
    if (given(cmd, flag)) return true;
  }
  return false;
}

}  // namespace baton::cli
