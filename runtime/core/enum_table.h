// enum_lookup: the entry of a table (names, library constants) for an enum value, the table listing
// one entry for each enumerator in their order.
#pragma once

#include <cstddef>
#include <type_traits>

namespace baton {

// table[value] for an enum whose enumerators are 0, 1, ..., kLast (one entry each, in that order),
// or `fallback` for a value outside them.
template <auto kLast, typename Entry, size_t N>
constexpr Entry enum_lookup(decltype(kLast) value, const Entry (&table)[N], std::type_identity_t<Entry> fallback) {
  static_assert(N == static_cast<size_t>(kLast) + 1, "one entry for each enumerator");
  const auto index = static_cast<size_t>(value);
  return index < N ? table[index] : fallback;
}

}  // namespace baton
