// `baton plan`'s flags that only one objective (or only one kind of profile) reads: refused elsewhere, each with
// one message naming the flag and why, so that no flag is accepted and then ignored.
#pragma once

#include <CLI/CLI.hpp>
#include <set>
#include <string>

namespace baton::cli {

// The long names ("--stages") of the flags given to `command` on the command line.
std::set<std::string> flags_given(const CLI::App& command);

// `objective`: baton or pipedream; `given`: the long names ("--stages") of the flags on the command line;
// `profile_path`: --profile's value (empty: none; pipedream:FILE: PipeDream's graph.txt); `schedule`: --schedule's.
void check_plan_objective_flags(const std::string& objective, const std::set<std::string>& given,
                                const std::string& profile_path, const std::string& schedule);

}  // namespace baton::cli
