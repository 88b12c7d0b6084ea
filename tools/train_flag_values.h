// How the rows of `baton train`'s flag table read a value into the settings: a field of TrainConfig
// or ParallelConfig as its own type, a parallel choice by its name, a key of a JSON-object field
// (the optimiser's, the learning-rate schedule's), or a switch setting a field.
#pragma once

#include <string>
#include <type_traits>

#include "runtime/core/error.h"
#include "tools/train_flags.h"

namespace baton::cli {

template <class Config>
Config& part_of(TrainSettings& settings) {
  if constexpr (std::is_same_v<Config, TrainConfig>) {
    return settings.train;
  } else {
    return settings.parallel;
  }
}

// The value, read as the field's type T.
template <class Config, class T>
FlagValue read_into(T Config::*field) {
  return {false, CLI::detail::type_name<T>(),
          [field](TrainSettings& s, const CLI::Option& o) { part_of<Config>(s).*field = o.as<T>(); }};
}

// The name of a parallel choice, read by `parse` (parallel_choices.h and the like); an unknown name
// is parse's error, naming the flag.
template <class Kind>
FlagValue choice_into(Kind parallel::ParallelConfig::*field, Kind (*parse)(std::string_view)) {
  return {false, "TEXT", [field, parse](TrainSettings& s, const CLI::Option& o) {
            s.parallel.*field = parallel::parse_choice(o.get_name(), o.as<std::string>(), parse);
          }};
}

// The value, read as T, at `key` of a JSON-object field.
template <class T>
FlagValue read_into_key(nlohmann::json TrainConfig::*object, const char* key) {
  return {false, CLI::detail::type_name<T>(),
          [object, key](TrainSettings& s, const CLI::Option& o) { (s.train.*object)[key] = o.as<T>(); }};
}

// A switch: given, it sets the field to `value`.
template <class Config, class T>
FlagValue switch_to(T Config::*field, T value) {
  return {true, "", [field, value](TrainSettings& s, const CLI::Option&) { part_of<Config>(s).*field = value; }};
}

// A switch with a negated name ("--channels-last,!--no-channels-last"): the last one given decides.
template <class Config>
FlagValue switch_into(bool Config::*field) {
  return {true, "", [field](TrainSettings& s, const CLI::Option& o) { part_of<Config>(s).*field = o.as<bool>(); }};
}

// A switch setting `key` of a JSON-object field: true, or false through its "!--no-..." name.
inline FlagValue switch_key(nlohmann::json TrainConfig::*object, const char* key) {
  return {true, "", [object, key](TrainSettings& s, const CLI::Option& o) { (s.train.*object)[key] = o.as<bool>(); }};
}

}  // namespace baton::cli
