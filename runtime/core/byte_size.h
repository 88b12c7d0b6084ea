// Sizes a user reads: byte counts in decimal units, and the memory of this machine (for estimates
// that refuse a request before allocating it).
#pragma once

#include <string>

namespace baton {

// "6.60 TB", "3.07 MB", "512 bytes".
std::string decimal_bytes(double bytes);

// The machine's physical memory in bytes (0 when unknown).
double physical_memory_bytes();

}  // namespace baton
